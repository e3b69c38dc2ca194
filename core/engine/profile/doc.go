// Package profile knows the inference engines lmbench meets (vLLM,
// vLLM fronted by LMCache, SGLang, Ollama, llama.cpp's server, TGI and the
// built-in engine) and what each of them reports: where its tokenizer
// is, where a response says how many prompt tokens were cached, the
// prefix of its Prometheus metrics, how its prefix cache is reset, and
// which request extras (ignore_eos, min_tokens, seed) it honours.
//
// Start with Detect, which asks the engine's version and info endpoints
// and reads its model list, or ForKind when --engine-kind names the
// engine. Probe adds live checks (does /tokenize answer, does /metrics)
// and says in plain words what lmbench can and cannot measure there.
package profile
