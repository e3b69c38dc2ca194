package protocol

import (
	"slices"
	"time"
)

// Major is the protocol major: the go-plugin protocol version and the "v1"
// in the proto package paths. Minor grows with every additive change.
const (
	Major = 1
	Minor = 7
)

// Capabilities added by minors. A peer uses one only when both announced it.
const (
	// FinishedInStep: the plugin reads StepRequest.Finished, so the host
	// delivers finished results inside the next Step (one round trip per
	// loop turn) instead of an OnFinished call before it. (minor 1)
	FinishedInStep = "finished-in-step"
	// ReleaseContent: the host drops content listed in
	// StepResponse.Released. (minor 1)
	ReleaseContent = "release-content"
	// ToolCalls: the host sends messages with tool calls, the tool role and
	// request tools, and reports the tool calls an answer streamed. (minor 1)
	ToolCalls = "tool-calls"
	// LookAhead: a closed-loop workload hands over requests before a slot
	// frees. The host holds a request with Request.MaxInFlight set until
	// fewer requests of its phase are in flight and sends it the moment
	// one finishes, with no round trip to the plugin in between; and
	// Next.InFlightBelow (NextWaitForInFlightBelow) asks for the next Step
	// only once the requests handed over run low, so one Step refills
	// several. An open-loop workload hands over requests before they are
	// due: the host holds a request whose Scheduled offset is still ahead
	// and sends it when due, with no Step in between. (minor 1)
	LookAhead = "look-ahead"
	// ExpectedReuse: a request may declare the prompt tokens it expects
	// the engine to find cached (Request.ExpectedCachedTokens) and the
	// tier it targets (Request.TargetTier); the host sets them beside what
	// the engine reports in its cache ledger. An older host ignores them.
	// (minor 2)
	ExpectedReuse = "expected-reuse"
	// Tokenizer: the host answers the workload's token counts (texts, and
	// chats through the model's chat template) when WorkloadConfig.Tokens
	// is set: over gRPC, queries travel on the Tokenize stream the host
	// opens. (minor 2)
	Tokenizer = "tokenizer"
	// RequestedRate: the workload says in Configured.RequestedRate what
	// rate its schedule asks for. (minor 2)
	RequestedRate = "requested-rate"
	// IgnoreEOS: a request may ask for exactly its MaxTokens output tokens
	// (Request.IgnoreEOS); the host sends vLLM's and SGLang's extra body
	// fields ignore_eos and min_tokens. An older host sends the request
	// without them. (minor 3)
	IgnoreEOS = "ignore-eos"
	// CheckOptions: before it contacts the engine, the host sends a
	// Configure with WorkloadConfig.CheckOnly; the plugin checks the
	// options (the schema, Validate, and what else needs no engine, such as
	// reading a trace) and answers their errors without configuring. A
	// real Configure follows. (minor 3)
	CheckOptions = "check-options"
	// Sharding: the workload splits its plan when Common.Shard names one
	// shard of several (lmbench run --shard I/N): it keeps the sessions,
	// documents or request ordinals the shard owns (Shard.Owns) and, for an
	// open-loop schedule, the global schedule's due times, so N shards
	// together send the plan one unsharded run sends. A host refuses
	// --shard for a workload without it. (minor 4)
	Sharding = "shard"
	// Scores: the workload scores the answers it hears of (a needle's
	// exact match, say) under the names in WorkloadDescription.ScoreKeys,
	// and returns them in StepResponse.Scores and, for results delivered
	// by OnFinished, in its answer (Scorer). The host puts them on the
	// request's record. An older host asks for no scores. (minor 6)
	Scores = "scores"
	// TokenizeTools: the host counts a chat's tools, its assistant
	// messages' tool calls and its tool messages' call ids through the
	// chat template (Chat.Tools, ChatMessage.ToolCalls and ToolCallID),
	// as the engine renders them. An older host counts only the messages'
	// text, so the SDK refuses to count such a chat there. (minor 7)
	TokenizeTools = "tokenize-tools"
)

// Tiers a request's expected reuse targets (Request.TargetTier).
const (
	TierGPU   = "gpu"   // the engine's own prefix cache
	TierCPU   = "cpu"   // a KV connector's CPU memory (LMCache)
	TierDisk  = "disk"  // a KV connector's disk
	TierBlend = "blend" // non-prefix reuse (CacheBlend)
)

// Tiers are the TargetTier values, "" aside (no tier named).
var Tiers = []string{TierGPU, TierCPU, TierDisk, TierBlend}

// HostCapabilities is what a host built with this SDK supports.
var HostCapabilities = []string{FinishedInStep, ReleaseContent, ToolCalls, LookAhead, ExpectedReuse, Tokenizer, RequestedRate, IgnoreEOS, CheckOptions, Sharding, Scores, TokenizeTools}

// WorkloadCapabilities is what a workload served by this SDK supports.
var WorkloadCapabilities = []string{FinishedInStep, ReleaseContent, ToolCalls, LookAhead, ExpectedReuse, Tokenizer, RequestedRate, IgnoreEOS, CheckOptions, Sharding, Scores, TokenizeTools}

// Negotiate returns the capabilities both sides announced, in a's order.
func Negotiate(a, b []string) Capabilities {
	var out Capabilities
	for _, c := range a {
		if slices.Contains(b, c) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// Capabilities is a negotiated set.
type Capabilities []string

// Has reports whether c is in the set.
func (cs Capabilities) Has(c string) bool { return slices.Contains(cs, c) }

// Plugin kinds.
const (
	WorkloadKind = "workload"
	ExporterKind = "exporter"
)

// HostInfo is what the host tells a plugin in Describe. An older host
// sends none: ProtocolMinor 0 and no capabilities.
type HostInfo struct {
	Version       string // lmbench's version
	ProtocolMinor int
	Capabilities  []string
}

// PluginInfo identifies a plugin binary.
type PluginInfo struct {
	Kind          string // WorkloadKind or ExporterKind
	Name          string // canonical name, e.g. "long-doc-qa", "csv"
	Version       string
	Summary       string // one line for --help and `lmbench plugins`
	Prefix        string // flag prefix, e.g. "ldqa" -> --ldqa-document-length
	ProtocolMinor int
	Capabilities  []string
	SDKVersion    string
}

// OptionType is the type of an option's value.
type OptionType int

const (
	OptionUnspecified OptionType = iota
	OptionString
	OptionInt
	OptionFloat
	OptionBool
	OptionEnum
	OptionDuration
)

func (t OptionType) String() string {
	switch t {
	case OptionString:
		return "string"
	case OptionInt:
		return "int"
	case OptionFloat:
		return "float"
	case OptionBool:
		return "bool"
	case OptionEnum:
		return "enum"
	case OptionDuration:
		return "duration"
	}
	return "unspecified"
}

// An option value is one of string, int64, float64 or bool (nil: none).
// A duration travels as int64 nanoseconds.
type Values = map[string]any

// OptionSpec describes one option; the host derives the CLI flag
// (--<prefix>-<name>), the config key (<prefix>_<name with _>) and the
// environment variable (LMBENCH_<PREFIX>_<NAME>) from it.
type OptionSpec struct {
	Name     string // kebab-case, without the prefix
	Type     OptionType
	Default  any // string, int64, float64 or bool
	Help     string
	Min, Max *float64
	Enum     []string
	Group    string
	Advanced bool
	Label    string // for forms, e.g. "Document length (tokens)"
}

// FieldError is an invalid option value. Option is the option's name
// (kebab-case, without prefix), or "" for an error about no single option.
type FieldError struct {
	Option  string
	Message string
}

func (e *FieldError) Error() string {
	if e.Option == "" {
		return e.Message
	}
	return e.Option + ": " + e.Message
}

// Field is one line of a configuration banner.
type Field struct{ Label, Value string }

// Phase is the run phase a request belongs to. The host runs Warmup,
// resets its stats and clock, then runs Measure.
type Phase int

const (
	Warmup  Phase = 1
	Measure Phase = 2
)

func (p Phase) String() string {
	switch p {
	case Warmup:
		return "warmup"
	case Measure:
		return "measure"
	}
	return "unspecified"
}

// Phases are the phases of a run, in order.
var Phases = []Phase{Warmup, Measure}

// --- workload protocol ---

// WorkloadDescription is a workload's answer to Describe.
type WorkloadDescription struct {
	Info    PluginInfo
	Options []OptionSpec
	// TagKeys are the tag keys the workload puts on its requests, in order.
	TagKeys []string
	// WantsResponseText: deliver response text (and tool calls) in Result.
	WantsResponseText bool
	// ScoreKeys name the scores the workload gives each answer (the
	// Scores capability); none: it scores nothing. (minor 6)
	ScoreKeys []string
	// Deterministic asks for deterministic decoding: the host sends every
	// request with the run's seed (the body's "seed", which vLLM and
	// SGLang honour), besides temperature 0, which it always sends; an
	// older host sends no seed. (minor 6)
	Deterministic bool
}

// Common holds the run-wide settings every workload may use.
type Common struct {
	Seed            int64
	Model           string
	KVCacheVolumeGB float64
	TokensPerGB     int64
	CompletionsMode bool
	// Shard is the part of a sharded run this process sends (the zero
	// value: the whole plan). Capability Sharding (minor 4).
	Shard Shard
}

// WorkloadConfig is what Configure receives: the options set above the
// plugin's own defaults, and the common settings.
type WorkloadConfig struct {
	Options Values
	Common  Common
	// Tokens counts tokens as the engine's tokenizer does; nil when the
	// host has none (--tokenizer words) or predates the Tokenizer
	// capability (minor 2).
	Tokens TokenCounter
	// CheckOnly asks only for the options' errors, before the engine is
	// contacted (the CheckOptions capability): Common has the seed, the
	// KV-cache volume and tokens per GB when given, no model. The answer's
	// Errors are all that counts; the workload is not configured.
	CheckOnly bool
}

// Configured is Configure's answer.
type Configured struct {
	// Resolved is every option after resolution, derived ones included.
	Resolved Values
	Banner   []Field
	Title    string // banner title, usually the workload name
	// PlannedRequests is the known number of measured requests (0 = unknown).
	PlannedRequests int64
	// RequestedRate is the measured requests per second the workload's
	// schedule asks for, 0 when it sets none (the RequestedRate
	// capability): the summary sets the achieved rate against it.
	RequestedRate float64
	// Errors are rejected options; when set nothing else counts.
	Errors []FieldError
}

// StepRequest is what the host tells Step.
type StepRequest struct {
	Phase  Phase
	Offset time.Duration // since the phase started
	// InFlight counts this phase's requests the workload has handed over
	// and not yet heard the result of: those in flight and those held.
	InFlight int
	// Finished are the results finished since the last delivery, when the
	// FinishedInStep capability was negotiated (else OnFinished carries them).
	Finished []Result
}

// Content is text registered once and referenced by id from later requests.
type Content struct{ ID, Text string }

// Segment is a piece of text: inline, or a reference to registered content.
type Segment struct {
	Text string
	Ref  string // content id; when set, Text is unused
}

// ToolCall is a function call the assistant made (OpenAI's tool_calls entry).
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // JSON text, as the model produced it
}

// Tool is a function the model may call (OpenAI's tools entry).
type Tool struct {
	Name        string
	Description string
	Parameters  string // JSON Schema text; "" = none
}

// Message is one chat message.
type Message struct {
	Role    string // system, user, assistant, tool (or developer)
	Content []Segment
	// ToolCalls are an assistant message's calls.
	ToolCalls []ToolCall
	// ToolCallID is the call a tool message answers.
	ToolCallID string
}

// Request is one request for the host to send. Exactly one of Messages
// (chat) and Prompt (completions, with Completion set) is the body.
type Request struct {
	ID         string
	Messages   []Message
	Prompt     []Segment
	Completion bool
	MaxTokens  int
	Tags       map[string]string
	// Scheduled is when the request is due, as an offset in its phase;
	// unset (HasScheduled false), the offset at which its Step was due. A
	// host with LookAhead holds a request due later than now until then.
	Scheduled    time.Duration
	HasScheduled bool
	// Tools the model may call (chat only).
	Tools []Tool
	// MaxInFlight, when above 0, holds the request until fewer than
	// MaxInFlight requests of its phase are in flight (the LookAhead
	// capability). Held requests go out in the order they were returned:
	// one that must wait holds back those after it.
	MaxInFlight int
	// ExpectedCachedTokens (HasExpectedCached set) is how many of the
	// prompt's tokens the workload expects the engine to find cached: 0
	// for a request meant to be cold, the shared prefix's length for one
	// meant to reuse it (the host aligns it to the engine's block).
	// TargetTier names the tier the reuse is meant to come from ("":
	// none named). The ExpectedReuse capability.
	ExpectedCachedTokens int
	HasExpectedCached    bool
	TargetTier           string
	// PromptTokens is the prompt's length as the host's tokenizer counts
	// it (Env.Tokenizer: the chat template included), when the workload
	// knows it; the summary sets it beside the engine's
	// usage.prompt_tokens. 0: not stated. (minor 2)
	PromptTokens int
	// IgnoreEOS asks the engine for exactly MaxTokens output tokens, not
	// stopping at the end-of-sequence token (a trace's output lengths).
	// The IgnoreEOS capability. (minor 3)
	IgnoreEOS bool
}

// NextKind says when the host calls Step again.
type NextKind int

const (
	NextUnspecified    NextKind = iota
	NextWakeAt                  // at phase offset At (at once if it has passed)
	NextWakeAtOrFinish          // at At, or as soon as a request finishes
	NextWaitForFinish           // when a request finishes
	NextDone                    // never: the phase is done
	// NextWaitForInFlightBelow: once fewer than InFlightBelow requests are
	// handed over and unheard of (StepRequest.InFlight), at once if there
	// already are (the LookAhead capability).
	NextWaitForInFlightBelow
)

// Next is when the host calls Step again.
type Next struct {
	Kind          NextKind
	At            time.Duration
	InFlightBelow int
}

// StepResponse is Step's answer.
type StepResponse struct {
	// Contents are registered before the requests are read, so the
	// requests of the same response may reference them.
	Contents []Content
	Requests []Request
	// Released content ids: no later request references them (the
	// ReleaseContent capability). Released after this response's requests
	// were resolved.
	Released []string
	Next     Next
	// Scores of answers the workload heard of (the Scores capability).
	Scores []Score
}

// Score is a finished request's scores, as the workload judged its
// answer: Values by score name (WorkloadDescription.ScoreKeys), 1 for a
// right answer and 0 for a wrong one, or any value between. (minor 6)
type Score struct {
	RequestID string
	Phase     Phase
	Values    map[string]float64
}

// Result is a finished request as the host measured it.
type Result struct {
	ID      string
	Phase   Phase
	Success bool
	Error   string
	// Text is the response text, and ToolCalls the calls it streamed; both
	// empty unless the workload wants response text.
	Text         string
	ToolCalls    []ToolCall
	TTFT         float64 // seconds; -1 for a failed request
	Latency      float64 // seconds
	InputTokens  int
	OutputTokens int
	// CachedTokens is usage.prompt_tokens_details.cached_tokens: prompt
	// tokens the engine found in its prefix cache (0 when it reports none;
	// an older host never sets it).
	CachedTokens int
	Finish       time.Duration // offset in the phase
}

// --- exporter protocol ---

// ExporterDescription is an exporter's answer to Describe.
type ExporterDescription struct {
	Info    PluginInfo
	Options []OptionSpec
}

// RunMetadata describes the run being exported.
type RunMetadata struct {
	RunID          string
	Workload       string
	Model          string
	OutputDir      string
	LMBenchVersion string
	TagKeys        []string // the workload's declared tag keys, in order
	ConfigJSON     string   // resolved configuration, no secrets
	Started        time.Time
}

// ExporterConfig is what an exporter's Configure receives.
type ExporterConfig struct {
	Options Values
	Run     RunMetadata
}

// Record is one finished request: what the host's journal keeps, its
// statistics read and exporters receive (core/record names this same
// type). Durations are seconds (TTFT is -1 for a failed request, as in
// the original tool); a zero time means "none". Timestamps are wall-clock
// times derived from the host's monotonic clock, anchored at the run's
// start.
type Record struct {
	RunID        string
	Workload     string
	Phase        Phase
	RequestID    string
	Tags         map[string]string
	Success      bool
	Error        string
	TTFT         float64
	Latency      float64
	DecodeSpeed  float64
	ITL          float64 // mean gap between content chunks, seconds
	InputTokens  int64
	OutputTokens int64
	CachedTokens int64
	Scheduled    time.Time
	// ExplicitSchedule: the workload set Scheduled (a k/qps schedule), so
	// Submit-Scheduled is dispatch lag; otherwise Scheduled is when the
	// Step that returned the request was due. (minor 5)
	ExplicitSchedule bool
	Submit           time.Time
	FirstToken       time.Time
	Finish           time.Time
	Seq              int64 // completion order in the run, from 1

	// Chunks is the number of output chunks (content, reasoning or
	// tool-call deltas), all of them; UsageOutputTokens is
	// usage.completion_tokens as the engine reported it, 0 when it
	// reported none (OutputTokens then falls back to Chunks, so when the
	// two disagree both are kept).
	Chunks            int64
	UsageOutputTokens int64
	// ChunkOffsetsUs are the output chunks' arrival times in microseconds
	// after Submit, the first 16,384 of them; ChunkOffsetsTruncated when
	// there were more (Chunks has the full count).
	ChunkOffsetsUs        []int64
	ChunkOffsetsTruncated bool
	// What the engine said about its answer, "" when it said nothing: the
	// finish_reason ("stop", "length", "tool_calls", …), the response id
	// and the model that answered.
	FinishReason  string
	ResponseID    string
	ResponseModel string
	// StatedPromptTokens is the prompt's length the workload stated
	// (Request.PromptTokens), by the host's tokenizer, beside InputTokens,
	// the engine's usage.prompt_tokens; 0: none stated. (minor 5)
	StatedPromptTokens int64
	// OutputText is the answer's text, kept only when the run records
	// outputs (lmbench run --record-outputs); "" otherwise. (minor 6)
	OutputText string
	// OutputLogprobs are the log-probabilities of the answer's first
	// tokens (lmbench run --record-logprobs K), as JSON: an array of
	// {"token","logprob","top":[{"token","logprob"}...]}, most likely
	// alternative first; "" when not asked or the engine returned none.
	// (minor 6)
	OutputLogprobs string
	// Scores are the workload's scores of the answer by name (the Scores
	// capability); nil when it gave none. (minor 6)
	Scores map[string]float64
	// TargetTier is the tier the request's reuse targets, as the workload
	// declared it (Request.TargetTier; "": none named). (minor 6)
	TargetTier string
}

// Timings derived from a record's own fields, in seconds, so that every
// exporter defines them alike; ok is false where one is undefined.

// TPOT is the time per output token after the first,
// (Latency-TTFT)/(OutputTokens-1), as vLLM's benchmark defines it: only for
// a successful request with a first token and at least two output tokens.
// It is the one definition: the summary, lmbench report, lmbench compare
// and the result files' tpot columns all take it from here.
func (r *Record) TPOT() (seconds float64, ok bool) {
	if !r.Success || r.OutputTokens < 2 || r.FirstToken.IsZero() || r.TTFT < 0 {
		return 0, false
	}
	return (r.Latency - r.TTFT) / float64(r.OutputTokens-1), true
}

// TTFTFromScheduled is FirstToken-Scheduled: the time to first token
// counted from when the request was due, so it includes any wait before it
// was sent. Undefined without a first token.
func (r *Record) TTFTFromScheduled() (seconds float64, ok bool) {
	if r.Scheduled.IsZero() || r.FirstToken.IsZero() {
		return 0, false
	}
	return r.FirstToken.Sub(r.Scheduled).Seconds(), true
}

// E2EFromScheduled is Finish-Scheduled: the latency counted from when the
// request was due (failed requests too, like Latency).
func (r *Record) E2EFromScheduled() (seconds float64, ok bool) {
	if r.Scheduled.IsZero() || r.Finish.IsZero() {
		return 0, false
	}
	return r.Finish.Sub(r.Scheduled).Seconds(), true
}

// Summary is the final result of the measured phase.
type Summary struct {
	RunID       string
	JSON        string // bench_summary.json's content
	Total       int64
	Successful  int64
	Failed      int64
	Elapsed     float64 // seconds
	Interrupted bool
}

// File is a file an exporter wrote.
type File struct {
	Path        string
	Rows        int64
	Description string
}
