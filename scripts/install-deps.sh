#!/usr/bin/env bash
# Installs what Fulcrum needs to build and test, only what is missing. Idempotent.
set -euo pipefail

DEB_PACKAGES=(
  build-essential cmake ninja-build pkg-config python3 python3-pip
  libdpdk-dev dpdk libssl-dev libpcap-dev libhyperscan-dev libipsec-mb-dev
  ocl-icd-opencl-dev pocl-opencl-icd
  libgtest-dev libbenchmark-dev tshark
  python3-matplotlib  # tools/plot_adaptive.py (the plots in docs/)
  nlohmann-json3-dev  # reading profile files (runtime/balancing/profile.cc)
  graphviz  # fulcrum graph --svg
  libcpp-httplib-dev  # the control plane's HTTP server (src/control/)
  chromium  # the dashboard test (headless)
  dpdk-dev  # dpdk-telemetry.py, DPDK's telemetry client (tests/e2e/test_control_plane.py)
  clang-16 libfuzzer-16-dev libclang-rt-16-dev  # make fuzz / fuzz-smoke (libFuzzer, ASan, UBSan)
  libhttp-parser-dev  # the L7 proxy's HTTP/1.x parser (src/l7/proxy)
  nginx wrk curl  # the L7 tests' backend and clients, the proxy benchmark's reference
  modsecurity-crs libnginx-mod-http-modsecurity  # the WAF's rules and its reference verdicts
  libmodsecurity3  # the WAF NF: libinjection (@detectSQLi, @detectXSS), loaded at run time
  libpcre2-dev  # the WAF NF: PCRE2 confirms the CRS regexes Hyperscan can only prefilter
  libxml2-dev  # the WAF NF: XML request bodies (XML:/* variables)
)
PY_PACKAGES=(scapy prometheus_client cryptography)

missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

for p in "${PY_PACKAGES[@]}"; do
  python3 -c "import $p" 2>/dev/null && continue
  echo "install-deps: installing Python package $p"
  python3 -m pip install -q "$p" 2>/dev/null || python3 -m pip install -q --break-system-packages "$p"
done
