// Package sim is a simulated LLM inference engine with an OpenAI-compatible
// HTTP API, so lmbench can run real benchmarks end to end on a machine
// without a GPU, and so a prefix-cache hit is visibly faster than a miss.
// It is a test double and a demo, never a stand-in for a real engine in
// reported results.
//
// # Starting
//
//	cfg := sim.DefaultConfig()
//	cfg.RegisterFlags(fs, "sim-") // optional: --sim-prefill-per-token etc.
//	// ... parse flags, then:
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
//     Sampling fields such as temperature are accepted and ignored.
//     Responses report usage.prompt_tokens_details.cached_tokens.
//   - Streams are server-sent events: for chat, a first chunk with
//     delta {"role":"assistant","content":""}, then one chunk per output
//     token (the last carrying finish_reason "length"), then, with
//     include_usage, a chunk with no choices and the usage, then
//     "data: [DONE]". Completions streams are the same without the role
//     chunk, the token in choices[0].text.
//   - GET /metrics serves Prometheus text with vLLM's names:
//     vllm:num_requests_running, vllm:num_requests_waiting,
//     vllm:prefix_cache_queries_total and vllm:prefix_cache_hits_total
//     (in tokens), vllm:prompt_tokens_total, vllm:generation_tokens_total,
//     vllm:request_success_total.
//   - GET /health answers 200.
//
// # Tokens
//
// A token is a whitespace-separated word (strings.Fields). A chat prompt is
// the words of every message's text, concatenated in order; roles and chat
// templates add no tokens, and text parts of one message are joined by a
// space. The output is always exactly max_tokens tokens: word k of a fixed
// 16-word vocabulary, with a leading space on every token but the first,
// so the output text splits back into completion_tokens words.
//
// # Cost model
//
// One simulated GPU prefills one request at a time; other requests queue,
// in arrival order (vllm:num_requests_waiting). Decoding is batched: once
// prefilled, each request paces its own tokens, unaffected by the others.
//
//	time to first token = queue wait + uncached prompt tokens × PrefillPerToken
//	token k (k ≥ 1)     = first token + k × DecodePerToken
//
// Every delay is multiplied by TimeScale: 1 is real time, 0.01 runs 100
// times faster, 0 never sleeps. A client that disconnects, or Close,
// cancels its request and frees the GPU at once.
//
// # Prefix cache
//
// The prompt is cut into BlockSize-token blocks; a block's hash chains the
// previous block's, so a block hits only when everything before it matches
// too. When a request reaches the GPU, its cached tokens are its longest
// run of leading full blocks already in the cache (the block holding the
// last prompt token never counts, since that token is always computed, as
// in vLLM); only the rest is prefilled. Then every full block of the prompt
// is stored or refreshed in an LRU of CacheTokens tokens (0: caching off).
// A request queued behind an identical one therefore hits on what that one
// just prefilled.
package sim
