#!/bin/bash
# Cloned on two workers against one worker on each CPU, for builds alternated: each line is one
# pipeline in one round of one build. Usage: tools/clone_scaling.sh ROUNDS BUILD... (each a
# fulcrum binary); prints JSON lines. Run from the repository root. With REGIME=CMD, CMD's output
# (a figure of the machine's cross-CPU regime, e.g. a cache-line ping-pong's cycles) is recorded
# before each pipeline.
set -euo pipefail
rounds=$1
shift
R="gen:size=64,flows=1024,dst=routes,routes=configs/routes-demo.txt"
R6="gen:proto=ipv6,size=78,flows=1024,dst=routes,routes=configs/routes6-demo.txt"
apps=("ipv4-router|$R" "ipv6-router|$R6" "ipsec-gateway|gen:size=64,flows=1024"
      "ids|gen:size=512,flows=1024" "l2-switch|gen:size=64,flows=1024")
rate() { "$1" run "configs/$2.click" --port "$3" --port net_null0,no-rx=1 --seconds 1 --cores "$4" 2>&1 |
  awk '/^in /{print $4}'; }
for ((i = 0; i < rounds; ++i)); do
  for bin in "$@"; do
    for a in "${apps[@]}"; do
      IFS='|' read -r app port <<< "$a"
      regime=$([ -n "${REGIME:-}" ] && $REGIME || echo null)
      one0=$(rate "$bin" "$app" "$port" 0)
      one1=$(rate "$bin" "$app" "$port" 1)
      two=$(rate "$bin" "$app" "$port" 0,1)
      python3 -c "import json,sys; a,b,c=map(float,sys.argv[4:7]); print(json.dumps({'round': int(sys.argv[1]), 'build': sys.argv[2], 'pipeline': sys.argv[3], 'regime': json.loads(sys.argv[7]), 'one_cpu0_mpps': a, 'one_cpu1_mpps': b, 'clone_mpps': c, 'clone_over_two_ones': round(c / (a + b), 4)}))" "$i" "$bin" "$app" "$one0" "$one1" "$two" "$regime"
    done
  done
done
