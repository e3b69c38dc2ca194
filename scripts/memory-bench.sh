#!/usr/bin/env bash
# Memory over a long run: multi-round-chat at QPS requests/s for DURATION
# seconds against the built-in engine in its own process (every cost at
# zero, cache off), sampling the lmbench host's RSS every 5 s (the engine's
# and the plugins' memory are not counted). 409 sessions (10 GB x 8192
# tokens/GB over 200 tokens a session) start a new conversation every
# MAX_ROUNDS answered rounds, releasing their answers' content; the
# original's unbounded history would grow by design. Prints the RSS one
# minute in, then the median and the maximum after it, and the maximum's
# excess over the one-minute value.
set -euo pipefail
BIN=${BIN:-bin}
QPS=${QPS:-500}
DURATION=${DURATION:-1200}
MAX_ROUNDS=${MAX_ROUNDS:-8}
PORT=${PORT:-18555}
out=$(mktemp -d)
trap 'kill $sim 2>/dev/null || true; rm -rf "$out"' EXIT
"$BIN/lmbench" sim --port "$PORT" --time-scale 0 --gpu-gb 0 --cpu-gb 0 --log-level warn >/dev/null 2>&1 &
sim=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done
"$BIN/lmbench" run --engine-url "http://127.0.0.1:$PORT" --workload multi-round-chat --tokens-per-gb-kvcache 8192 --kv-cache-volume 10 \
	--mrc-shared-prompt-length 100 --mrc-chat-history-length 100 --mrc-user-input-length 10 --mrc-output-length 10 \
	--mrc-qps "$QPS" --mrc-duration "$DURATION" --mrc-max-rounds "$MAX_ROUNDS" \
	--no-interactive -q --json --output-dir "$out/run" >"$out/stdout" 2>"$out/stderr" &
pid=$!
start=$(date +%s)
while kill -0 "$pid" 2>/dev/null; do
	rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
	[ -n "$rss" ] && echo "$(( $(date +%s) - start )) $rss" >>"$out/rss"
	sleep 5
done
wait "$pid" || true
python3 - "$out/rss" "$out/run/bench_summary.json" "$DURATION" <<'PY'
import json, sys, statistics as st
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1])]
r = json.load(open(sys.argv[2]))["results"]
dur = int(sys.argv[3])
first = [kb for t, kb in rows if t >= 60][0]
# While requests are sent; the host then reads the journal back for the
# final numbers (all the run's samples in memory for a moment).
during = [kb for t, kb in rows if 60 < t <= dur]
end = [kb for t, kb in rows if t > dur] or [rows[-1][1]]
mb = lambda kb: kb / 1024
print(f"requests {r['total_requests']} failed {r['failed_requests']} over {r['elapsed_time']:.0f} s")
print("RSS every minute (MB):", " ".join(f"{mb(kb):.1f}" for t, kb in rows if t % 60 < 5))
print(f"host RSS at 60 s {mb(first):.1f} MB; from then to the end of sending: median {mb(st.median(during)):.1f} MB, "
      f"max {mb(max(during)):.1f} MB ({(max(during)/first-1)*100:+.1f}%), n={len(during)} samples; "
      f"while the summary is computed: max {mb(max(end)):.1f} MB")
PY
