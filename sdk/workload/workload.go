package workload

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// Phase is the run phase a request belongs to. The host runs Warmup,
// resets its stats and clock, then runs Measure.
type Phase = protocol.Phase

const (
	Warmup  = protocol.Warmup
	Measure = protocol.Measure
)

// Common holds the run-wide settings every workload may use.
type Common = protocol.Common

// Shard is the part of a sharded run a process sends (Common.Shard).
type Shard = protocol.Shard

// Logger is the plugin's logger (zerolog's), so a workload can keep one in
// a field without importing zerolog.
type Logger = zerolog.Logger

// Env is what New receives besides the decoded options.
type Env struct {
	Common
	// Logger reaches the host's log with its level, under the plugin's name.
	Logger Logger
	// Content registers long text once; requests then reference it.
	Content *Registry
	// Host is what the host announced: its version, protocol minor and
	// capabilities (empty for a host older than protocol minor 1).
	Host protocol.HostInfo
	// Tokenizer counts tokens as the engine does; nil when the host has
	// none (--tokenizer words, or a host before protocol minor 2): lengths
	// are then in whitespace words.
	Tokenizer *Tokenizer
	// Context is the Configure call's, for the calls New makes (Tokenizer).
	Context context.Context
	// (Common.Shard is the part of a sharded run this process sends: the
	// zero value, all of it, unless the Definition has Shards.)
}

// HostHas reports whether the host announced capability c (a
// protocol.* capability name).
func (e Env) HostHas(c string) bool { return slices.Contains(e.Host.Capabilities, c) }

// Segment is a piece of message text: inline text or a reference to
// content registered with Registry.Register.
type Segment = protocol.Segment

// Text is an inline segment.
func Text(s string) Segment { return Segment{Text: s} }

// Message is one chat message.
type Message = protocol.Message

// ToolCall is a function call an assistant message makes (OpenAI's
// tool_calls entry); Arguments is JSON text.
type ToolCall = protocol.ToolCall

// Tool is a function the model may call (OpenAI's tools entry);
// Parameters is a JSON Schema as text.
type Tool = protocol.Tool

func System(segs ...Segment) Message    { return Message{Role: "system", Content: segs} }
func User(segs ...Segment) Message      { return Message{Role: "user", Content: segs} }
func Assistant(segs ...Segment) Message { return Message{Role: "assistant", Content: segs} }

// AssistantCalls is an assistant turn that calls tools (with optional text).
func AssistantCalls(calls []ToolCall, segs ...Segment) Message {
	return Message{Role: "assistant", Content: segs, ToolCalls: calls}
}

// ToolReply is the tool role's answer to the call callID.
func ToolReply(callID string, segs ...Segment) Message {
	return Message{Role: "tool", Content: segs, ToolCallID: callID}
}

// DefaultMaxTokens is the original's send_request default.
const DefaultMaxTokens = 128

// Request is one request for the host to send. Build it with Chat or
// Completion and the With* methods; each returns a modified copy. Its
// fields are those of protocol.Request.
type Request protocol.Request

// Chat builds a chat request with the default max_tokens.
func Chat(id string, msgs ...Message) Request {
	return Request{ID: id, Messages: msgs, MaxTokens: DefaultMaxTokens}
}

// Completion builds a completions request with the default max_tokens.
func Completion(id string, prompt ...Segment) Request {
	return Request{ID: id, Prompt: prompt, Completion: true, MaxTokens: DefaultMaxTokens}
}

// WithMaxTokens sets max_tokens.
func (r Request) WithMaxTokens(n int) Request { r.MaxTokens = n; return r }

// Tag adds a tag; tags flow into every export so results can be grouped.
func (r Request) Tag(key, value string) Request {
	t := make(map[string]string, len(r.Tags)+1)
	maps.Copy(t, r.Tags)
	t[key] = value
	r.Tags = t
	return r
}

// WithTools offers the model functions to call (chat requests only).
func (r Request) WithTools(tools ...Tool) Request { r.Tools = tools; return r }

// WithMaxInFlight has the host hold the request until fewer than n
// requests of its phase are in flight, then send it at once, with no
// round trip to the plugin: a closed-loop workload returns its next
// request before a slot frees (look-ahead). Held requests go out in the
// order returned. It needs a host with the protocol.LookAhead
// capability (Env.HostHas); Step fails on an older one.
func (r Request) WithMaxInFlight(n int) Request { r.MaxInFlight = n; return r }

// WithExpectedReuse declares how many of the prompt's tokens the workload
// expects the engine to find cached (0: the request is meant to be cold)
// and the tier that reuse targets (protocol.TierGPU, TierCPU, TierDisk,
// TierBlend; "": none named). The host aligns the count to the engine's
// block and sets it beside what the engine reports, in the summary's cache
// ledger. A host without the protocol.ExpectedReuse capability ignores it.
func (r Request) WithExpectedReuse(tokens int, tier string) Request {
	r.ExpectedCachedTokens, r.HasExpectedCached, r.TargetTier = tokens, true, tier
	return r
}

// WithIgnoreEOS asks the engine for exactly the request's max tokens: the
// host sends ignore_eos (and min_tokens equal to max_tokens), which vLLM
// and SGLang honour, so an answer does not end early at the
// end-of-sequence token. A host without the protocol.IgnoreEOS capability
// sends the request without them.
func (r Request) WithIgnoreEOS() Request { r.IgnoreEOS = true; return r }

// WithPromptTokens states the prompt's length in the engine's tokens, as
// Env.Tokenizer counted it (CountChats for a chat: the template included),
// so the summary can set it beside what the engine reports.
func (r Request) WithPromptTokens(n int) Request { r.PromptTokens = n; return r }

// At records when the request is due (its scheduled offset in the phase),
// so dispatch lag (sent - scheduled) can be measured. A host with the
// protocol.LookAhead capability holds a request handed over before it is
// due and sends it then (see Env.Ahead); an older one sends it at once.
func (r Request) At(d time.Duration) Request { r.Scheduled, r.HasScheduled = d, true; return r }

// StepInput is what the host tells Step.
type StepInput struct {
	Phase    Phase
	Offset   time.Duration // since the phase started
	InFlight int           // this phase's requests sent whose results OnFinished has not yet had
}

type nextKind int

const (
	nextNow nextKind = iota
	nextWakeAt
	nextWakeAtOrFinish
	nextFinish
	nextDone
	nextInFlightBelow
)

// StepOutput is Step's answer: requests to send now and when to call Step
// again. The zero value (and Send without a method) means "call again now".
type StepOutput struct {
	Requests []Request
	next     nextKind
	at       time.Duration
	below    int
}

// Send returns the requests to send now; chain WakeAt, WaitForFinish,
// WaitForFinishOr or Done to say when to call Step again.
func Send(reqs ...Request) StepOutput { return StepOutput{Requests: reqs} }

// WakeAt asks for the next Step at phase offset d.
func (o StepOutput) WakeAt(d time.Duration) StepOutput { o.next, o.at = nextWakeAt, d; return o }

// WaitForFinish asks for the next Step when any request finishes.
func (o StepOutput) WaitForFinish() StepOutput { o.next = nextFinish; return o }

// WaitForFinishOr asks for the next Step when a request finishes or at d.
func (o StepOutput) WaitForFinishOr(d time.Duration) StepOutput {
	o.next, o.at = nextWakeAtOrFinish, d
	return o
}

// WaitForInFlightBelow asks for the next Step once fewer than n of this
// phase's requests are handed over and not yet heard of
// (StepInput.InFlight): with requests held for a slot (WithMaxInFlight),
// one Step can refill several. Needs the protocol.LookAhead capability.
func (o StepOutput) WaitForInFlightBelow(n int) StepOutput {
	o.next, o.below = nextInFlightBelow, n
	return o
}

// Done ends the phase: no more requests. The host waits for the phase's
// requests to finish and delivers them to OnFinished before moving on.
func (o StepOutput) Done() StepOutput { o.next = nextDone; return o }

// String says what o asks for, e.g. "send [q0 q1], then wake at 1s"; unit
// tests that call Step directly can compare it.
func (o StepOutput) String() string {
	ids := make([]string, len(o.Requests))
	for i, r := range o.Requests {
		ids[i] = r.ID
	}
	var next string
	switch o.next {
	case nextNow:
		next = "step again now"
	case nextWakeAt:
		next = "wake at " + o.at.String()
	case nextWakeAtOrFinish:
		next = "wait for a finish or " + o.at.String()
	case nextFinish:
		next = "wait for a finish"
	case nextDone:
		next = "done"
	case nextInFlightBelow:
		next = "wait until fewer than " + strconv.Itoa(o.below) + " in flight"
	}
	return "send [" + strings.Join(ids, " ") + "], then " + next
}

// WakeAt, WaitForFinish, WaitForFinishOr and Done are Send() followed by
// the method of the same name: nothing to send now.
func WakeAt(d time.Duration) StepOutput          { return StepOutput{}.WakeAt(d) }
func WaitForFinish() StepOutput                  { return StepOutput{}.WaitForFinish() }
func WaitForFinishOr(d time.Duration) StepOutput { return StepOutput{}.WaitForFinishOr(d) }
func Done() StepOutput                           { return StepOutput{}.Done() }

// Result is a finished request as measured by the host. Text and
// ToolCalls are empty unless Definition.WantsResponseText.
type Result = protocol.Result

// Workload decides what to send and when. The host calls Step and
// OnFinished from one loop, never concurrently, so no locks are needed.
type Workload interface {
	// Step returns requests to send now and when to be called next.
	Step(ctx context.Context, in StepInput) (StepOutput, error)
	// OnFinished receives the requests finished since the last call (both
	// phases, in the order they finished), before the Step that follows;
	// those finished after the last Step of a phase arrive before the next
	// phase starts.
	OnFinished(ctx context.Context, results []Result) error
}

// Field is one line of the configuration banner.
type Field = protocol.Field

// Optional interfaces a Workload may implement.
type (
	// Bannerer returns the configuration banner printed before the run.
	Bannerer interface{ Banner() []Field }
	// Resolver returns derived settings (e.g. "num-documents") reported
	// with the resolved options.
	Resolver interface{ Resolved() map[string]any }
	// Planner returns how many measured requests will be sent (0 = unknown).
	Planner interface{ PlannedRequests() int }
	// Rater returns the measured requests per second an open-loop
	// workload's schedule asks for (0 = none): the summary sets the
	// achieved rate against it.
	Rater interface{ RequestedRate() float64 }
)

// Scorer is an optional Workload method: the scores of an answer, by the
// names in Definition.ScoreKeys (1 right, 0 wrong, or between), called
// for each result right after OnFinished has it; nil or empty: none. The
// host puts them on the request's record (capability protocol.Scores; an
// older host asks for none).
type Scorer interface {
	Score(r Result) map[string]float64
}

// Prechecker is an optional interface of a workload's options type: checks
// that need no engine but more than Validate, such as reading and linting
// a trace file. A host with the protocol.CheckOptions capability runs
// them (with the schema and Validate) before it contacts the engine, so
// such errors come before any network traffic; New must still check what
// it relies on, since an older host skips the precheck.
type Prechecker interface{ Precheck() error }

// ShardPrechecker is Prechecker for what depends on the shard, such as a
// run-wide concurrency too small to divide (protocol.Shard.Share): called
// in the check-only Configure of a sharded run.
type ShardPrechecker interface {
	PrecheckShard(protocol.Shard) error
}

// Definition describes a workload plugin. O is its options struct; the
// values in Defaults are the defaults (see package option for the tags).
type Definition[O any] struct {
	Name    string // canonical name, e.g. "long-doc-qa"
	Prefix  string // flag prefix, e.g. "ldqa"
	Summary string
	Version string
	// TagKeys are the tag keys the workload puts on requests, in order.
	TagKeys []string
	// WantsResponseText asks the host to deliver response text in Result.
	WantsResponseText bool
	// ScoreKeys name the scores the workload gives each answer (its
	// Scorer; capability protocol.Scores), e.g. "exact", "contains". A
	// workload that scores answers usually wants response text too.
	ScoreKeys []string
	// Deterministic asks the host to send every request with the run's
	// seed, for answers that repeat from run to run (lmbench always sends
	// temperature 0): what a workload comparing answers wants.
	Deterministic bool
	// CountsTokens asks the host for its tokenizer (capability
	// protocol.Tokenizer, Env.Tokenizer); without it the host neither
	// probes one nor offers it.
	CountsTokens bool
	// Shards says New splits the plan by Env.Shard (capability
	// protocol.Sharding): a host refuses lmbench run --shard for a
	// workload without it, and the SDK refuses a sharded Configure.
	Shards   bool
	Defaults O
	// New builds the workload from validated options. Return an
	// *option.FieldError to point at one option.
	New func(opts O, env Env) (Workload, error)
}
