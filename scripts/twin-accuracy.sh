#!/usr/bin/env bash
# How well the twin predicts an engine it was fitted to (docs/twin.md).
# The "real" engine is bin/lmbench sim in its own process with costs unlike
# the built-in defaults. A Mooncake-style trace (0 to 3 blocks of a shared
# prefix, prompts of 128 to 2,560 tokens, 32 to 160 output tokens, 1 request/s) is
# replayed against it at two speed-ups (3 and 9); lmbench fit fits a profile to those
# two runs; then a sweep over six other speed-ups (four below saturation, the engine saturating near 8) runs on the real engine
# and on the twin (--engine-url builtin --sim-profile), and lmbench compare
# sets them side by side. Prints the fitted parameters against the truth,
# and the prediction error per point.
#   scripts/twin-accuracy.sh [OUT_DIR]     (make build first)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d)}
mkdir -p "$out"
port=${TWIN_PORT:-18473}
bin=bin/lmbench
[ -x "$bin" ] || { echo "run make build first" >&2; exit 1; }

# The truth: every cost unlike the built-in defaults; no GPU tier, so hits
# load from the CPU tier.
truth=(--prefill-per-token 80us --prefill-growth 20us --prefill-overhead 4ms
	--cpu-load-per-token 8us --decode-per-token 6ms --decode-per-seq 400us --max-num-seqs 8
	--gpu-gb 0 --cpu-gb 4)

python3 - "$out/trace.jsonl" <<'PY'
import json, random, sys
rng = random.Random(7)
t = 0.0
with open(sys.argv[1], "w") as f:
    for i in range(400):
        t += rng.expovariate(1.0) * 1000
        shared = rng.randint(0, 3)  # blocks of a common prefix: 0 to 3 of 512 tokens
        n = shared * 512 + rng.randint(128, 1024)
        blocks = (n + 511) // 512
        ids = [1 + k for k in range(shared)] + [100000 + 10 * i + k for k in range(blocks - shared)]
        f.write(json.dumps({"timestamp": int(t), "input_length": n, "output_length": rng.randint(32, 160), "hash_ids": ids}) + "\n")
PY

"$bin" sim --port "$port" "${truth[@]}" --log-level warn >"$out/engine.log" 2>&1 &
engine=$!
trap 'kill $engine 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null && break; sleep 0.1; done

common=(--workload trace-replay --tr-trace "$out/trace.jsonl" --tr-ignore-eos --tr-max-requests 100
	--tokens-per-gb-kvcache 8192 --metrics-interval 500ms -q --overwrite --json)
for s in 3 9; do
	"$bin" run --engine-url "$port" "${common[@]}" --tr-speedup "$s" --output-dir "$out/fit-$s" >/dev/null
done
"$bin" fit "$out/fit-3" "$out/fit-9" -o "$out/profile.json" | tee "$out/fit.txt"

ladder=4,5,6,7,11,16
"$bin" sweep --engine-url "$port" "${common[@]}" --sweep tr_speedup=$ladder --sweep-continue --output-dir "$out/measured" >/dev/null
"$bin" sweep --engine-url builtin --sim-profile "$out/profile.json" "${common[@]}" --sweep tr_speedup=$ladder --sweep-continue --output-dir "$out/predicted" >/dev/null

echo
echo "truth: ${truth[*]}"
"$bin" compare "$out/predicted" "$out/measured"
echo "files in $out"
