package profile

import (
	"fmt"
	"slices"
	"strings"
)

// Kind names an engine, as --engine-kind spells it.
type Kind string

// The kinds lmbench knows. Auto (the default of --engine-kind) asks the
// engine; Unknown is an engine that answered none of the questions
// Detect asks, treated as a plain OpenAI-compatible server.
const (
	Auto        Kind = "auto"
	VLLM        Kind = "vllm"
	VLLMLMCache Kind = "vllm-lmcache"
	SGLang      Kind = "sglang"
	Ollama      Kind = "ollama"
	LlamaCpp    Kind = "llamacpp"
	TGI         Kind = "tgi"
	Builtin     Kind = "builtin"
	Unknown     Kind = "unknown"
)

// Kinds are the values --engine-kind accepts, in the order help lists
// them.
func Kinds() []Kind {
	return []Kind{Auto, VLLM, VLLMLMCache, SGLang, Ollama, LlamaCpp, TGI, Builtin, Unknown}
}

// ParseKind reads an --engine-kind value ("" is Auto); origin names the
// flag, key or variable in the error.
func ParseKind(s, origin string) (Kind, error) {
	k := Kind(strings.ToLower(strings.TrimSpace(s)))
	if k == "" {
		return Auto, nil
	}
	if slices.Contains(Kinds(), k) {
		return k, nil
	}
	names := make([]string, 0, len(Kinds()))
	for _, x := range Kinds() {
		names = append(names, string(x))
	}
	return "", fmt.Errorf("%s: unknown engine kind %q; expected one of %s", origin, s, strings.Join(names, ", "))
}

// Shape is the request and response of an engine's /tokenize.
type Shape string

// The /tokenize shapes: vLLM's {"model","prompt"|"messages"} answered with
// {"count","tokens"}; SGLang's {"prompt"} answered alike; llama.cpp's
// {"content"} answered with {"tokens"}; TGI's {"inputs"} answered with a
// list of tokens. None: the engine has no tokenizer endpoint.
const (
	ShapeVLLM     Shape = "vllm"
	ShapeSGLang   Shape = "sglang"
	ShapeLlamaCpp Shape = "llamacpp"
	ShapeTGI      Shape = "tgi"
	ShapeNone     Shape = ""
)

// Tokenizer is where an engine counts tokens.
type Tokenizer struct {
	Path  string // "/tokenize"; "" when none
	Shape Shape
	// Chat is the path that renders or tokenizes a chat with the model's
	// template ("" when the engine offers none): vLLM's /tokenize with
	// messages, llama.cpp's /apply-template, TGI's /chat_tokenize.
	Chat string
}

// Reset is how an engine's prefix cache is emptied.
type Reset struct {
	Method, Path string // "" Path: the engine has none
	// Note is what it needs or what it leaves behind, "" when nothing.
	Note string
}

// Extras are the request fields beyond OpenAI's that an engine honours.
type Extras struct {
	IgnoreEOS, MinTokens, Seed bool
}

// Profile is what lmbench knows of one kind of engine, and what Detect
// learnt of the one it asked.
type Profile struct {
	Kind Kind
	// Name is how people write it ("vLLM", "llama.cpp server").
	Name string
	// Version is the engine's own ("0.11.0"), "" when it did not say;
	// DetectedFrom says what the kind was read from ("GET /api/version",
	// "--engine-kind").
	Version, DetectedFrom string

	Tokenizer Tokenizer
	// CachedTokens is where a response reports the prompt tokens found in
	// the cache ("usage.prompt_tokens_details.cached_tokens"); "" when it
	// does not. CachedNote says when it does ("only when started with
	// --enable-prompt-tokens-details").
	CachedTokens, CachedNote string
	// Metrics is the prefix of its Prometheus series ("vllm:"), "" when it
	// serves none; MetricsNote says how they are turned on.
	Metrics, MetricsNote string
	Reset                Reset
	Extras               Extras
}

// ReportsCachedTokens says whether the engine's responses carry the
// number of cached prompt tokens where lmbench reads it: usage's
// prompt_tokens_details, or llama.cpp's timings.cache_n (core/engine
// reads both).
func (p Profile) ReportsCachedTokens() bool {
	return p.CachedTokens == usageCached || p.CachedTokens == timingsCached
}

const (
	usageCached = "usage.prompt_tokens_details.cached_tokens"
	// timingsCached is llama.cpp server's: the final chunk's timings
	// object (cache_n, prompt_n, prompt_ms, predicted_n, predicted_ms...;
	// tools/server/README.md, server-task.cpp's result_timings).
	timingsCached = "timings.cache_n"
	vllmReset     = "needs the engine started with VLLM_SERVER_DEV_MODE=1"
)

// profiles are the static facts per kind, read from each engine's
// documentation and server source: vLLM's entrypoints/openai, SGLang's
// http_server.py, Ollama's openai/ and api/ packages, llama.cpp's
// tools/server/README.md, TGI's router.
var profiles = map[Kind]Profile{
	VLLM: {Kind: VLLM, Name: "vLLM",
		Tokenizer:    Tokenizer{Path: "/tokenize", Shape: ShapeVLLM, Chat: "/tokenize"},
		CachedTokens: usageCached, CachedNote: "only when the engine was started with --enable-prompt-tokens-details",
		Metrics: "vllm:",
		Reset:   Reset{Method: "POST", Path: "/reset_prefix_cache", Note: vllmReset},
		Extras:  Extras{IgnoreEOS: true, MinTokens: true, Seed: true}},
	VLLMLMCache: {Kind: VLLMLMCache, Name: "vLLM with LMCache",
		Tokenizer:    Tokenizer{Path: "/tokenize", Shape: ShapeVLLM, Chat: "/tokenize"},
		CachedTokens: usageCached, CachedNote: "only when the engine was started with --enable-prompt-tokens-details; they include LMCache's hits",
		Metrics: "vllm:", MetricsNote: "LMCache's own series are lmcache:",
		Reset: Reset{Method: "POST", Path: "/reset_prefix_cache",
			Note: vllmReset + "; it empties vLLM's GPU prefix cache, not LMCache's CPU and disk tiers"},
		Extras: Extras{IgnoreEOS: true, MinTokens: true, Seed: true}},
	SGLang: {Kind: SGLang, Name: "SGLang",
		Tokenizer:    Tokenizer{Path: "/tokenize", Shape: ShapeSGLang, Chat: "/tokenize"},
		CachedTokens: usageCached, CachedNote: "only when the engine was started with --enable-cache-report (its native API: meta_info.cached_tokens)",
		Metrics: "sglang:", MetricsNote: "only when started with --enable-metrics",
		Reset:  Reset{Method: "POST", Path: "/flush_cache", Note: "refused while requests are running"},
		Extras: Extras{IgnoreEOS: true, MinTokens: true, Seed: true}},
	Ollama: {Kind: Ollama, Name: "Ollama",
		Extras: Extras{Seed: true}},
	LlamaCpp: {Kind: LlamaCpp, Name: "llama.cpp server",
		Tokenizer:    Tokenizer{Path: "/tokenize", Shape: ShapeLlamaCpp, Chat: "/apply-template"},
		CachedTokens: timingsCached, CachedNote: "per slot: a request reuses only the prompt its slot last held",
		Metrics: "llamacpp:", MetricsNote: "only when started with --metrics",
		Reset:  Reset{Method: "POST", Path: "/slots/{id}?action=erase", Note: "one slot at a time, ids 0 to the server's total_slots-1"},
		Extras: Extras{IgnoreEOS: true, Seed: true}},
	TGI: {Kind: TGI, Name: "Text Generation Inference",
		Tokenizer: Tokenizer{Path: "/tokenize", Shape: ShapeTGI, Chat: "/chat_tokenize"},
		Metrics:   "tgi_",
		Extras:    Extras{Seed: true}},
	Builtin: {Kind: Builtin, Name: "lmbench's built-in engine",
		Tokenizer:    Tokenizer{Path: "/tokenize", Shape: ShapeVLLM, Chat: "/tokenize"},
		CachedTokens: usageCached,
		Metrics:      "vllm:",
		Reset:        Reset{Method: "POST", Path: "/reset_prefix_cache"},
		Extras:       Extras{IgnoreEOS: true, MinTokens: true, Seed: true}},
	Unknown: {Kind: Unknown, Name: "an OpenAI-compatible engine lmbench does not recognise",
		CachedTokens: usageCached, CachedNote: "if it reports them at all",
		Extras: Extras{Seed: true}},
}

// ForKind is the profile of a kind (Auto has none: ok false).
func ForKind(k Kind) (Profile, bool) {
	p, ok := profiles[k]
	return p, ok
}
