#!/usr/bin/env bash
# What each workload shows, on the built-in engine: runs each demo against
# `lmbench sim` (the built-in simulated vLLM + LMCache, served alone so its
# /metrics can be read after the run) and prints the summary lines and the
# KV-cache tier counters that explain them. The output is what the README's
# "What each workload shows" section quotes.
#
# Usage: scripts/workload-demos.sh [ldqa|mrc|rp|ldp|psf ...]   (default: all)
# Needs: make build (bin/), curl.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin}
LMBENCH="$BIN/lmbench"
[ -x "$LMBENCH" ] || { echo "missing $LMBENCH: run make build" >&2; exit 1; }
command -v curl >/dev/null || { echo "curl not found" >&2; exit 1; }

WORK=$(mktemp -d)
SIM_PID=""
cleanup() {
	if [ -n "$SIM_PID" ]; then kill "$SIM_PID" 2>/dev/null || true; wait "$SIM_PID" 2>/dev/null || true; fi
	rm -rf "$WORK"
}
trap cleanup EXIT

# start_sim FLAGS...: serves the built-in engine on a free loopback port; sets URL.
start_sim() {
	"$LMBENCH" sim --port 0 --log-level warn "$@" >"$WORK/sim.out" 2>"$WORK/sim.err" &
	SIM_PID=$!
	URL=""
	for _ in $(seq 100); do
		URL=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$WORK/sim.out" 2>/dev/null || true)
		[ -n "$URL" ] && return 0
		kill -0 "$SIM_PID" 2>/dev/null || { cat "$WORK/sim.err" >&2; exit 1; }
		sleep 0.05
	done
	echo "lmbench sim did not start" >&2
	exit 1
}

stop_sim() {
	kill "$SIM_PID"
	wait "$SIM_PID" 2>/dev/null || true
	SIM_PID=""
}

# run TITLE SIMFLAGS -- RUNFLAGS: one demo; prints the command, the summary
# lines and the tier counters.
run() {
	local title=$1; shift
	local sim=() runf=()
	while [ "$1" != "--" ]; do sim+=("$1"); shift; done
	shift
	runf=("$@")
	echo "### $title"
	echo "\$ lmbench sim${sim[*]:+ ${sim[*]}}"
	echo "\$ lmbench run --engine-url \$SIM --lmcache-url \$SIM ${runf[*]}"
	start_sim "${sim[@]}"
	local out="$WORK/out"
	rm -rf "$out"
	"$LMBENCH" run --engine-url "$URL" --lmcache-url "$URL" --no-interactive -q --output-dir "$out" \
		--log-level warn "${runf[@]}" >"$WORK/run.out" 2>"$WORK/run.err" || {
		cat "$WORK/run.out" "$WORK/run.err" >&2
		exit 1
	}
	grep -E '^(Successful requests|Failed requests|Mean TTFT|P50 TTFT|P90 TTFT)' "$WORK/run.out"
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		{ n++; c += $col["cached_tokens"] }
		END { if (n) printf "Mean cached_tokens per measured request: %.0f\n", c / n }' "$out/bench_results.csv"
	if [ -n "${PER_TAG:-}" ]; then
		# PER_TAG="KEY [LABEL]": one line per value of the tag column tag_KEY
		# (numeric), with the tag column tag_LABEL shown beside it.
		local key label
		read -r key label <<<"$PER_TAG"
		echo "Per $key${label:+ ($label)}: requests, mean prompt tokens, mean cached_tokens, mean TTFT (ms):"
		awk -F, -v key="tag_$key" -v label="${label:+tag_$label}" '
			NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
			{
				k = $col[key]; n[k]++
				in_[k] += $col["num_input_tokens"]; c[k] += $col["cached_tokens"]; t[k] += $col["ttft"]
				if (label != "") lab[k] = " " $col[label]
			}
			END {
				for (k in n)
					printf "  %-3s%s %5d %7.0f %7.0f %8.1f\n", k, lab[k], n[k], in_[k] / n[k], c[k] / n[k], t[k] / n[k] * 1000
			}' "$out/bench_results.csv" | sort -n -k1,1
	fi
	if [ -n "${SHOW_TTFTS:-}" ]; then
		echo "TTFT (ms) of each request, sorted (the GPU serves them in arrival order):"
		awk -F, 'NR > 1 { printf "%.0f\n", $3 * 1000 }' "$out/bench_results.csv" | sort -n | paste -sd ' ' -
	fi
	echo "/metrics after the run (warm-up included), in tokens:"
	curl -fsS "$URL/metrics" | awk '
		/^#/ { next }
		{
			name = $1; sub(/\{.*/, "", name)
			tier = ""; if (match($1, /tier="[a-z]+"/)) tier = substr($1, RSTART + 6, RLENGTH - 7)
			v[name, tier] = $2
		}
		function row(label, name) {
			printf "  %-24s gpu %-8s cpu %-8s disk %s\n", label, v[name, "gpu"], v[name, "cpu"], v[name, "disk"]
		}
		END {
			row("prefix hits by tier", "lmbench_sim:kv_prefix_hit_tokens_total")
			row("blend hits by tier", "lmbench_sim:kv_blend_hit_tokens_total")
			row("loaded from tier", "lmbench_sim:kv_loaded_tokens_total")
			printf "  vllm:prefix_cache_hits_total %s, prefilled (computed) %s, blend-recomputed %s\n",
				v["vllm:prefix_cache_hits_total", ""], v["lmbench_sim:prefill_computed_tokens_total", ""],
				v["lmbench_sim:blend_recomputed_tokens_total", ""]
		}'
	stop_sim
	echo
}

demos=("$@")
has() { [ ${#demos[@]} -eq 0 ] || [[ " ${demos[*]} " == *" $1 "* ]]; }

if has ldqa; then
	# 4,000-token documents, asked about one at a time (no queueing), short
	# answers at 1ms a token. 2 GB x 8,192 tokens/GB / 4,000 = 4 documents;
	# 4 GB: 8 documents (32,000 tokens: more than a 1 GB GPU tier holds).
	LDQA=(--workload long-doc-qa --ldqa-document-length 4000 --ldqa-query-per-document 2
		--ldqa-num-inflight-requests 1 --ldqa-shuffle-policy tile)
	run "long-doc-qa, no KV cache: every question is a cold prefill of its document" \
		--gpu-gb 0 --cpu-gb 0 --decode-per-token 1ms -- "${LDQA[@]}" --kv-cache-volume 2
	run "long-doc-qa, documents fit the GPU tier: warm hits" \
		--gpu-gb 8 --cpu-gb 32 --decode-per-token 1ms -- "${LDQA[@]}" --kv-cache-volume 2
	run "long-doc-qa, documents exceed the GPU tier, fit the CPU tier: CPU-tier hits" \
		--gpu-gb 1 --cpu-gb 8 --decode-per-token 1ms -- "${LDQA[@]}" --kv-cache-volume 4
fi

if has mrc; then
	# 4 sessions (1 GB x 8,192 tokens/GB / (500 + 1,500)), each a 500-token
	# system prompt and a 1,500-token history, asked a 50-token question every
	# 800 ms (5 queries/s round-robin) for 4 s: rounds 0 to 4, 20-token
	# answers at 1ms a token.
	MRC=(--workload multi-round-chat --mrc-shared-prompt-length 500 --mrc-chat-history-length 1500
		--mrc-user-input-length 50 --mrc-output-length 20 --mrc-qps 5 --mrc-duration 4 --kv-cache-volume 1)
	PER_TAG=round run "multi-round-chat, no KV cache: every round is a cold prefill of the whole conversation" \
		--gpu-gb 0 --cpu-gb 0 --decode-per-token 1ms -- "${MRC[@]}"
	PER_TAG=round run "multi-round-chat, the sessions fit the GPU tier: each round reuses the conversation so far" \
		--gpu-gb 4 --decode-per-token 1ms -- "${MRC[@]}"
	PER_TAG=round run "multi-round-chat, the sessions exceed the GPU tier: the conversation comes back from the CPU tier" \
		--gpu-gb 0.5 --decode-per-token 1ms -- "${MRC[@]}"
fi

if has rp; then
	SHOW_TTFTS=1 run "random-prefill: 10 requests of 4,000 tokens, all at once" \
		-- --workload random-prefill --rp-num-requests 10 --rp-request-length 4000 --kv-cache-volume 1
fi

if has ldp; then
	# A 200-token system prompt and 3 contexts of 1,000 tokens, sent in all 6
	# orders, one at a time, after one unrelated warmup request.
	LDP=(--workload long-doc-permutator --ldp-num-contexts 3 --ldp-context-length 1000
		--ldp-system-prompt-length 200 --ldp-num-permutations 6 --kv-cache-volume 1)
	PER_TAG="perm order" run "long-doc-permutator, prefix cache: only a context already seen at the head is reused" \
		--decode-per-token 1ms -- "${LDP[@]}"
	PER_TAG="perm order" run "long-doc-permutator, with blending: every context seen before is reused, at any position" \
		--decode-per-token 1ms --blend -- "${LDP[@]}"
fi

if has psf; then
	if [ ! -x "$BIN/lmbench-workload-prefix-suffix-tuner" ]; then
		echo "### prefix-suffix-tuner: plugin not built ($BIN/lmbench-workload-prefix-suffix-tuner); skipped"
	else
		# 2,000-token requests: a 1,600-token prefix, a 32-token breaker and a
		# shared suffix. --psf-thrash names the tier to overflow: the GPU tier
		# (4 GB) in baseline 1, the CPU tier (4 GB) in baselines 2 and 3.
		PSF=(--workload prefix-suffix-tuner --psf-context-length 2000 --psf-prefix-ratio 0.8 --psf-thrash 4
			--kv-cache-volume 1)
		run "prefix-suffix-tuner, baseline 1: GPU tier only" \
			--gpu-gb 4 --cpu-gb 0 --disk-gb 0 -- "${PSF[@]}"
		run "prefix-suffix-tuner, baseline 2: GPU + CPU + disk tiers" \
			--gpu-gb 1 --cpu-gb 4 --disk-gb 32 -- "${PSF[@]}"
		run "prefix-suffix-tuner, baseline 3: GPU + CPU + disk tiers with blending" \
			--gpu-gb 1 --cpu-gb 4 --disk-gb 32 --blend -- "${PSF[@]}"
	fi
fi
