#!/bin/bash
# Packs a build for a machine that has an NVIDIA driver but no DPDK, Hyperscan or intel-ipsec-mb
# installed (a GPU host): the binaries, every shared library they load except glibc's (kept
# apart in glibc/, for a host whose glibc is older), and the DPDK drivers a run loads (mempool,
# net_null, net_ring, net_pcap, net_af_packet, bus_pci) named as DPDK's plugin directory wants.
#
#   cmake -S . -B build-portable -G Ninja -DCMAKE_BUILD_TYPE=Release -DFULCRUM_MARCH=x86-64-v3
#   cmake --build build-portable --target fulcrum fulcrum_tests
#   tools/portable_bundle.sh build-portable fulcrum-bundle.tar.xz
#
# On the GPU host (as root, since DPDK loads its drivers from the directory it was built with):
#   mkdir -p /tmp/fb && tar -C /tmp/fb -xJf fulcrum-bundle.tar.xz
#   P=/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0; mkdir -p $P && cp -a /tmp/fb/pmds/* $P/
#   export LD_LIBRARY_PATH=/tmp/fb/lib:$P
#   FULCRUM_OFFLOAD_BACKEND=cuda /tmp/fb/bin/fulcrum_tests --gtest_filter='Offload*'
#   FULCRUM_OFFLOAD_BACKEND=cuda FULCRUM_BENCH_PROFILES=first-device \
#       /tmp/fb/bin/fulcrum bench --only offload_copy,adaptive --no-huge --out gpu.json
# (docs/offload.md, "On a GPU host"). x86-64 only.
set -euo pipefail
build=${1:?usage: tools/portable_bundle.sh BUILD_DIR OUT.tar.xz}
out=${2:?usage: tools/portable_bundle.sh BUILD_DIR OUT.tar.xz}
pmds=$(ls -d "$(pkg-config --variable=libdir libdpdk)"/dpdk/pmds-* | head -1)
abi=$(basename "$pmds" | sed 's/^pmds-//')
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/pmds" "$stage/glibc"
for b in "$build/fulcrum" "$build/tests/fulcrum_tests"; do [ -x "$b" ] && cp "$b" "$stage/bin/"; done
for d in mempool_ring mempool_stack net_null net_ring net_pcap net_af_packet bus_pci; do
  so="librte_$d.so.${abi%%.*}"
  # DPDK loads "*.so.ABI" from its plugin directory (23.0), not the shorter soname link.
  cp -L "$pmds/$so" "$stage/pmds/librte_$d.so.$abi"
  ln -s "librte_$d.so.$abi" "$stage/pmds/$so"
done
for f in "$stage"/bin/* "$stage"/pmds/*.so."$abi"; do ldd "$f" | awk '$3 ~ /^\// {print $3}'; done |
  sort -u | while read -r lib; do
    case $(basename "$lib") in
      librte_bus_pci.so.*) ;;  # a driver: loaded from the plugin directory only, never twice
      libc.so.6 | libm.so.6 | ld-linux-x86-64.so.2 | libpthread.so.0 | libdl.so.2 | librt.so.1)
        cp -L "$lib" "$stage/glibc/" ;;
      *) cp -L "$lib" "$stage/lib/" ;;
    esac
  done
strip --strip-debug "$stage"/bin/* 2>/dev/null || true
tar -C "$stage" -cf - . | xz -T0 -6 > "$out"
echo "$out: $(du -h "$out" | cut -f1) ($(du -sh "$stage" | cut -f1) unpacked)"
