#!/usr/bin/env python3
"""End to end: a pcap through the IPv4 router and pcaps out, checked by scapy and tshark; the
checks are ip_router.py's, over its IPv4 cases."""
import sys

import ip_router

if __name__ == "__main__":
    sys.exit(ip_router.main(ip_router.IPV4))
