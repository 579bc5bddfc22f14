#!/bin/bash
# The device checks of a session that is lent a GPU host, as one prepared script (the device
# budget is minutes: one call should do it all). Run on the GPU host, as root, from the
# repository root, with the portable bundle (tools/portable_bundle.sh) carried along:
#
#   tools/gpu_check.sh BUNDLE.tar.xz OUT_DIR [STEP_VARIANTS]
#
# It writes at most 8 files into OUT_DIR (the device tool brings back 8):
#   machine.txt       the host, the device list, each step's exit code and seconds, the benches'
#                     printed lines
#   cuda-tests.log    the CUDA tests (the OpenCL-only tests fail where the host has no OpenCL)
#   step.json         PolicyBalancer's size step, STEP_VARIANTS alternated on one profile
#                     (FULCRUM_BENCH_POLICY_ARGS; default: SETTLED_PERSIST 0, HOST_DRIFT true and
#                     the defaults, three rounds)
#   adaptive-APP.json the adaptive bench per application (IPv4, IPv6, IDS, IPsec), --seconds 0.5
# About 6 minutes on an H200 host (2026-11-27); docs/benchmarks.md, "On a GPU", reads them.
set -u
bundle=${1:?usage: tools/gpu_check.sh BUNDLE.tar.xz OUT_DIR [STEP_VARIANTS]}
out=${2:?usage: tools/gpu_check.sh BUNDLE.tar.xz OUT_DIR [STEP_VARIANTS]}
round="SETTLED_PERSIST 0;HOST_DRIFT true;"
variants=${3:-$round;$round;$round}
mkdir -p "$out" /tmp/fb
m=$out/machine.txt
tar -C /tmp/fb -xJf "$bundle" || exit 1
pmds=/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0
mkdir -p $pmds && cp -a /tmp/fb/pmds/* $pmds/
export LD_LIBRARY_PATH=/tmp/fb/lib:$pmds
export FULCRUM_OFFLOAD_BACKEND=cuda FULCRUM_BENCH_PROFILES=first-device
f=/tmp/fb/bin/fulcrum
{
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,power.draw,clocks.sm --format=csv
  nproc
  grep -m1 'model name' /proc/cpuinfo
  uname -r
  uptime
  $f devices
  $f --version
} >>"$m" 2>&1

# Runs "$@" with a time limit, appending its exit code and seconds to machine.txt.
timed() {
  local name=$1 limit=$2
  shift 2
  local t0
  t0=$(date +%s)
  timeout "$limit" "$@"
  echo "$name rc $? $(($(date +%s) - t0)) s" >>"$m"
}

timed cuda-tests 120 sh -c "/tmp/fb/bin/fulcrum_tests \
  --gtest_filter='Offload*:Devices/*:CudaRelease.*:PolicyBalancer*:PolicyScheduler*:EnergyModel.*:L7ChainKernel.*:Cuda*' \
  >'$out/cuda-tests.log' 2>&1"
FULCRUM_BENCH_BALANCERS=policy FULCRUM_BENCH_STEPS=size FULCRUM_BENCH_POLICY_ARGS="$variants" \
  timed step 240 sh -c "$f bench --only adaptive_step --seconds 1 --no-huge \
  --out '$out/step.json' >>'$m' 2>&1"
for app in ipv4-router ipv6-router ids ipsec-gateway; do
  FULCRUM_BENCH_APPS=$app timed "adaptive $app" 200 sh -c "$f bench --only adaptive \
    --seconds 0.5 --no-huge --out '$out/adaptive-$app.json' >/tmp/adaptive-$app.log 2>&1"
  grep "bench:" "/tmp/adaptive-$app.log" | tail -20 >>"$m"
done
uptime >>"$m"
