// Package sim is a simulated LLM inference engine, vLLM with LMCache, with
// an OpenAI-compatible HTTP API, so lmbench can run real benchmarks end to
// end on a machine without a GPU, and so every workload's effect on a
// KV cache can be seen: the timing follows a documented cost model and the
// cache's tiers are observable in /metrics and /status. It is a test double
// and a demo, never a stand-in for a real engine in reported results.
//
// # Starting
//
//	cfg := sim.DefaultConfig() // or simconfig.Config (core/config/simconfig): from flags, keys, variables
//	cfg.GPUGB = 1
//	srv, err := sim.New(cfg, logger) // validates cfg
//	if err != nil { ... }
//	defer srv.Close()
//	baseURL, err := srv.Start("127.0.0.1:0") // loopback only
//
// Point any OpenAI client at baseURL+"/v1". Or mount srv.Handler() on a
// server of your own (httptest.NewServer in tests); Close still cancels
// its requests.
//
// # API
//
// The shapes follow vLLM's OpenAI-compatible server:
//
//   - GET /v1/models lists the one model, Config.Model ("lmbench-sim").
//   - POST /v1/chat/completions and POST /v1/completions take model
//     (optional; another name gets 404), messages or prompt, max_tokens or
//     max_completion_tokens (the latter wins; default
//     Config.DefaultMaxTokens), stream and stream_options.include_usage.
//     Sampling fields such as temperature are accepted and ignored. The
//     output runs to max_tokens, unless Config.EOSAfter ends it earlier
//     (finish_reason "stop"); ignore_eos: true, or a larger min_tokens,
//     keeps it going, as in vLLM. Prompt plus output
//     longer than Config.MaxModelLen gets vLLM's 400. Responses report
//     usage.prompt_tokens_details.cached_tokens: the prefix tokens found
//     in any tier.
//   - Streams are server-sent events: for chat, a first chunk with
//     delta {"role":"assistant","content":""}, then one chunk per output
//     token (the last carrying finish_reason "length", or "stop", and stop_reason
//     null), then, with include_usage, a chunk with no choices and the
//     usage, then "data: [DONE]". Completions streams are the same without
//     the role chunk, the token in choices[0].text and "usage":null on
//     token chunks.
//   - POST /tokenize ({"prompt": ...} or {"messages": [...]}) answers
//     {"count","max_model_len","tokens","token_strs"}; POST /detokenize
//     ({"tokens": [...]}) answers {"prompt"}. Token ids are given to words
//     as /tokenize first sees them (the 16 output words come first).
//   - GET /metrics serves Prometheus text (prometheus/client_golang) with
//     vLLM's names, labelled engine="0" and model_name:
//     vllm:num_requests_running, vllm:num_requests_waiting,
//     vllm:kv_cache_usage_perc (GPU tier, 0 to 1),
//     vllm:prefix_cache_queries_total and vllm:prefix_cache_hits_total
//     (tokens, GPU tier only, as vLLM's own prefix cache),
//     vllm:num_preemptions_total (always 0: the simulator never preempts),
//     vllm:prompt_tokens_total, vllm:generation_tokens_total,
//     vllm:request_success_total and the histograms
//     vllm:time_to_first_token_seconds, vllm:inter_token_latency_seconds and
//     vllm:e2e_request_latency_seconds. With a CPU or disk tier, what a KV
//     connector would report: vllm:external_prefix_cache_queries_total and
//     _hits_total, and LMCache's lmcache:num_retrieve_requests_total,
//     lmcache:num_requested_tokens_total and lmcache:num_hit_tokens_total
//     (tokens the GPU did not hold, asked of and found in the lower tiers).
//     A request's cached_tokens is its increment of the GPU plus external
//     hit counters. Then the simulator's own series,
//     labelled tier="gpu|cpu|disk": lmbench_sim:kv_capacity_tokens,
//     kv_used_tokens, kv_prefix_hit_tokens_total,
//     kv_blend_hit_tokens_total, kv_loaded_tokens_total,
//     kv_stored_tokens_total, kv_demoted_tokens_total,
//     kv_evicted_tokens_total; plus lmbench_sim:prefill_computed_tokens_total,
//     lmbench_sim:blend_recomputed_tokens_total,
//     lmbench_sim:faults_total{kind} and lmbench_sim:resets_total{cleared}.
//   - GET /status answers in LMCache's shape: cache_context_meta.<id> with
//     model_name, world_size and kv_cache_layout.cache_size_per_token =
//     2^30 / (TokensPerGB × WorldSize), so `--lmcache-url` (or the
//     built-in engine's own lookup) derives TokensPerGB from it; plus a
//     storage_manager block listing the tiers.
//   - POST /reset_prefix_cache empties the GPU tier, as vLLM's;
//     ?tiers=all empties every tier. Faults.ResetNoop
//     (--sim-fault-reset-noop) answers 200 and clears nothing.
//   - Faults.SlowHits (--sim-fault-slow-hits) makes every reused token cost
//     a prefill while still reporting it cached: hits without a TTFT gain.
//   - GET /health answers 200.
//
// # Tokens
//
// Package core/sim/tokenizer turns prompts and chat messages into tokens
// and back. With Config.Tokenizer TokenizerWords (the default) a token is a
// whitespace-separated word (strings.Fields). A chat prompt is the words of
// every message's text, concatenated in order; roles and chat templates add
// no tokens, and text parts of one message are joined by a space.
//
// With TokenizerSubword a word of more than 3 characters costs 1 to 6
// tokens (by its FNV-1a hash: package sdk/subword), as pseudo-words do on a real
// tokenizer; a chat prompt goes through a ChatML-like template,
// <|im_start|> role content <|im_end|> per message (3 tokens) and
// <|im_start|> assistant (2) for the generation prompt; a completion
// prompt, and /tokenize's prompt unless add_special_tokens is false, starts
// with a BOS token. usage.prompt_tokens and the KV cache count the same
// tokens /tokenize does. Config.NoTokenize answers /tokenize and
// /detokenize with 404.
// The output is exactly max_tokens tokens (fewer with Config.EOSAfter): word k of a fixed
// 16-word vocabulary, with a leading space on every token but the first,
// so the output text splits back into completion_tokens words.
//
// # Cost model
//
// CostModel, below, is also what `lmbench sim --help` prints.
package sim

// CostModel documents the timing and the KV cache, for --help.
const CostModel = `Tokens are whitespace-separated words: a prompt of N words is N tokens
(with --tokenizer-mode subword a long word costs 1-6 tokens and the chat
template adds 3 per message plus 2; /tokenize counts the same tokens).

Cost model (every constant is a flag; every delay is multiplied by --time-scale):
  One simulated GPU prefills one request at a time, in arrival order; the
  others wait (vllm:num_requests_waiting). Decoding is batched: once
  prefilled, each request paces its own output tokens, unaffected by the
  others. For a request whose prompt the KV cache holds in part:

    time to first token = queue wait
                        + computed tokens          x prefill-per-token
                        + blended tokens x blend-recompute x prefill-per-token
                        + tokens found in CPU tier  x cpu-load-per-token
                        + tokens found in disk tier x disk-load-per-token
    output token k      = first token + k x decode-per-token

  Tokens found in the GPU tier cost nothing. The last prompt token is always
  computed (its logits give the first output token), as in vLLM.

KV cache (tier sizes in GB, converted with tokens-per-gb; 0 = tier off):
  The prompt is cut into block-size-token blocks whose hashes chain (block k
  covers blocks 0..k), so a block hits only when everything before it
  matches. The cached prefix is the longest run of leading blocks found in
  any tier; each block is taken from the fastest tier holding it.
  Every tier is an LRU. Every block a request uses ends up in the GPU tier and
  is written through to the CPU tier (or to disk when the CPU tier is off),
  as LMCache stores KV as it is computed. A block evicted from the GPU is
  demoted to the CPU tier if not there already; a block evicted from the CPU
  is demoted to disk; one evicted from the last tier is dropped. A block hit
  in a lower tier is loaded (its load cost) and promoted: into the GPU, and
  from disk back into the CPU tier.

Blending (--blend, CacheBlend-style):
  After the cached prefix, the rest of the prompt is scanned for block-size
  chunks whose content (whatever precedes it) is in some tier; each one found
  is reused at its tier's load cost plus blend-recompute of its tokens
  recomputed. Blended tokens are not prefix hits: cached_tokens leaves them
  out, lmbench_sim:kv_blend_hit_tokens_total counts them. With blending,
  every block is also kept as a chunk, so it takes twice the space.

Answers (--answers):
  The engine answers a needle question, the prompt's last "What is the X?",
  with V from a sentence "The X is V." in the prompt, or "I do not know.",
  and stops (finish_reason stop) instead of emitting filler tokens. With
  --fault-blend-corrupt P (and --blend), each blended chunk loses its
  tokens for the answer with probability P, drawn from the fault seed and
  the chunk's content (lmbench_sim:blend_corrupted_chunks_total counts
  them); a prompt computed that way is still cached as computed, so a
  later prefix hit on it answers right.

/metrics shows vLLM's series and per-tier counters (lmbench_sim:kv_*_tokens
{tier="gpu|cpu|disk"}); /status shows LMCache's layout, from which
2^30 / (cache_size_per_token x world_size) = tokens-per-gb.
`
