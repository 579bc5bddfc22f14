#!/usr/bin/env python3
"""End to end: the IPv4 router with its lookup offloaded (configs/ipv4-router-offload.click);
the checks are offload_router.py's, over its IPv4 cases."""
import sys

import offload_router

if __name__ == "__main__":
    sys.exit(offload_router.main(offload_router.IPV4))
