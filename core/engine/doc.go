// Package engine sends requests to an OpenAI-compatible inference engine
// (vLLM, SGLang, …) and measures them: submit, first-token, last-token and
// finish times, each output chunk's arrival, token usage, the streamed text
// and what the engine said about its answer (finish reason, id, model).
//
// Start with [New] and [Sender.Send]:
//
//	s, err := engine.New(engine.Config{BaseURL: "localhost:8000", Model: "Qwen/Qwen3-8B"})
//	if err != nil { ... }
//	defer s.Close()
//	res := s.Send(ctx, engine.Request{ID: "r0", Messages: msgs, MaxTokens: 128})
//	if !res.Success { ... res.Error ... }
//
// Send is the benchmark's hot path. It never retries and never panics: every
// failure is one Result with Success false and a non-empty Error. All
// requests of a Sender share one tuned HTTP transport (keep-alive,
// no compression, no response-header timeout: long prefills are normal), and
// the context is the only deadline.
//
// Chat requests may carry an assistant's tool calls, tool replies and the
// tools on offer, sent in OpenAI's shape; the tool calls an answer streams
// are assembled from their deltas into [Result].ToolCalls, and count as
// output for the first-token time, the chunk count and the ITL.
//
// The model list (DetectModel, ListModels) is core/engine/profile's.
package engine
