#!/usr/bin/env python3
"""End to end: a pcap through the IPv6 router and pcaps out, checked by scapy and tshark, with
IP6Lookup's default algorithm (the compressed trie) and ALGORITHM bsearch; the checks are
ip_router.py's, over its IPv6 cases."""
import sys

import ip_router

if __name__ == "__main__":
    sys.exit(ip_router.main(ip_router.IPV6))
