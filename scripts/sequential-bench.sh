#!/usr/bin/env bash
# Sequential long-doc-qa against a bare Go client: 1 request in flight,
# 2000-word documents, 128 output tokens, an instant engine (the built-in
# one in its own process, every cost at zero, cache off). Each round runs
# the bare client (scripts/bareclient: net/http and a line
# scanner, nothing else) and lmbench on the same measured requests, and
# prints both rates and lmbench's ratio; the summary gives the median and
# the spread over ROUNDS rounds. Rates are measured requests over the
# measured phase (lmbench: its summary's elapsed time; the bare client:
# its own clock around the same requests).
set -euo pipefail
BIN=${BIN:-bin}
ROUNDS=${ROUNDS:-7}
DOCS=${DOCS:-100}
QUERIES=${QUERIES:-30}
PORT=${PORT:-18333}
out=$(mktemp -d)
trap 'kill $sim 2>/dev/null || true; rm -rf "$out"' EXIT
(cd scripts/bareclient && GOWORK=off go build -o "$out/bareclient" .)
"$BIN/lmbench" sim --port "$PORT" --time-scale 0 --gpu-gb 0 --cpu-gb 0 --log-level warn >/dev/null 2>&1 &
sim=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done
# tokens per GB chosen so that 1 GB holds DOCS documents of 2000 words
tpg=$((DOCS * 2000))
bareclient() {
	"$out/bareclient" -url "http://127.0.0.1:$PORT/v1/chat/completions" -docs "$DOCS" -queries "$QUERIES" -length 2000 -max-tokens 128 | awk '{print $6}'
}
lmbench() {
	"$BIN/lmbench" run --engine-url "http://127.0.0.1:$PORT" --workload long-doc-qa --ldqa-num-inflight-requests 1 \
		--ldqa-document-length 2000 --ldqa-query-per-document "$QUERIES" --tokens-per-gb-kvcache "$tpg" --kv-cache-volume 1 \
		--no-interactive -q --json --output-dir "$out/run" >/dev/null 2>&1
	python3 -c "import json; r=json.load(open('$out/run/bench_summary.json'))['results']; print(r['successful_requests']/r['elapsed_time'])"
}
# The order alternates between rounds, so neither side always runs on a
# machine the other just warmed up.
for i in $(seq "$ROUNDS"); do
	if ((i % 2)); then bare=$(bareclient); lm=$(lmbench); else lm=$(lmbench); bare=$(bareclient); fi
	python3 -c "print(f'round $i: bare {float($bare):.1f} req/s  lmbench {float($lm):.1f} req/s  ratio {float($lm)/float($bare):.3f}')"
done | tee "$out/all"
python3 - "$out/all" <<'PY'
import sys, statistics as st
r = [float(l.split()[-1]) for l in open(sys.argv[1])]
print(f"ratio lmbench/bare: median {st.median(r):.3f}  min {min(r):.3f}  max {max(r):.3f}  (n={len(r)})")
PY
