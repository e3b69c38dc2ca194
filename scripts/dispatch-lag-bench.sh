#!/usr/bin/env bash
# Dispatch lag of an open loop at 1,000 req/s: random-prefill with
# --rp-rate 1000 (tiny prompts, 1 output token) against the built-in engine
# in its own process with every cost at zero, so the engine answers at
# once and what is measured is lmbench's own schedule slip. Dispatch lag is
# submit - due per measured request, from the journal (submit is when the
# sender started writing the request). Each round prints p50/p99/max; the
# summary gives the median and the spread of each over ROUNDS rounds. The
# machine's load average is printed with each round: on a shared machine
# other processes' load shows in the tail (the client is descheduled).
set -euo pipefail
BIN=${BIN:-bin}
ROUNDS=${ROUNDS:-5}
RATE=${RATE:-1000}
SECONDS_PER_ROUND=${SECONDS_PER_ROUND:-10}
ARRIVAL=${ARRIVAL:-constant}
PORT=${PORT:-18334}
out=$(mktemp -d)
trap 'kill $sim 2>/dev/null || true; rm -rf "$out"' EXIT
"$BIN/lmbench" sim --port "$PORT" --time-scale 0 --gpu-gb 0 --cpu-gb 0 --log-level warn >/dev/null 2>&1 &
sim=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done
n=$(python3 -c "print(int($RATE * $SECONDS_PER_ROUND))")
for i in $(seq "$ROUNDS"); do
	rm -rf "$out/run"
	"$BIN/lmbench" run --engine-url "http://127.0.0.1:$PORT" --workload random-prefill \
		--rp-rate "$RATE" --rp-arrival "$ARRIVAL" --rp-num-requests "$n" --rp-request-length 16 \
		--tokens-per-gb-kvcache 1000 --kv-cache-volume 1 \
		--no-interactive -q --output-dir "$out/run" >/dev/null 2>&1
	python3 - "$out/run/bench_journal.jsonl" "$i" <<'PY'
import json, sys
lags = []
for line in open(sys.argv[1]):
    e = json.loads(line)
    r = e.get("record")
    if e.get("kind") == "request" and r["phase"] == "measure" and r.get("explicit_schedule"):
        lags.append((r["submit_unix_ns"] - r["scheduled_unix_ns"]) / 1e6)
lags.sort()
q = lambda p: lags[min(len(lags) - 1, int(p / 100 * len(lags)))]
load = open("/proc/loadavg").read().split()[0] if __import__("os").path.exists("/proc/loadavg") else "?"
print(f"round {sys.argv[2]}: n={len(lags)} dispatch lag p50 {q(50):.3f} ms  p99 {q(99):.3f} ms  max {lags[-1]:.3f} ms  (load average {load})")
PY
done | tee "$out/all"
python3 - "$out/all" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
for name, idx in (("p50", 6), ("p99", 9), ("max", 12)):
    v = [float(r[idx]) for r in rows]
    print(f"dispatch lag {name}: median {st.median(v):.3f} ms  min {min(v):.3f}  max {max(v):.3f}  (n={len(v)} rounds)")
PY
