#!/usr/bin/env bash
# Measures lmbench's own overhead: 200 simultaneous 2000-word random-prefill
# requests against the built-in engine with every simulated cost at zero
# and its KV cache off (the cache's hashing is the simulated engine's work,
# not lmbench's), repeated RUNS times. Prints TTFT (as lmbench reports it) and peak RSS of
# the lmbench process (which includes the in-process engine), with the spread.
set -euo pipefail
BIN=${BIN:-bin}
RUNS=${RUNS:-5}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)"; exit 1; }
for i in $(seq "$RUNS"); do
	/usr/bin/time -f "%M" -o "$out/rss" "$BIN/lmbench" run --engine-url builtin --sim-time-scale 0 --sim-gpu-gb 0 --sim-cpu-gb 0 \
		--workload random-prefill --rp-num-requests 200 --rp-request-length 2000 \
		--tokens-per-gb-kvcache 8192 --no-interactive -q --json --output-dir "$out/run" >/dev/null 2>&1
	python3 - "$out/run/bench_summary.json" "$(cat "$out/rss")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
print(f"mean_ttft_ms {r['mean_ttft_ms']:.2f} p50 {r['p50_ttft_ms']:.2f} p99 {r['p99_ttft_ms']:.2f} "
      f"ok {r['successful_requests']} peak_rss_mb {int(sys.argv[2])/1024:.1f}")
PY
done | tee "$out/all"
python3 - "$out/all" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
for key in ("mean_ttft_ms", "p99", "peak_rss_mb"):
    v = [float(r[r.index(key) + 1]) for r in rows]
    print(f"{key:13s} median {st.median(v):8.2f}  min {min(v):8.2f}  max {max(v):8.2f}  (n={len(v)})")
PY
