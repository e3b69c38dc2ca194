package workload

import (
	"context"
	"maps"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// Phase is the run phase a request belongs to. The host runs WARMUP, resets
// its stats and clock, then runs MEASURE.
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

// Common holds the run-wide settings every workload may use.
type Common struct {
	Seed            int64
	Model           string
	KVCacheVolumeGB float64
	TokensPerGB     int64
	CompletionsMode bool
}

// Env is what New receives besides the decoded options.
type Env struct {
	Common
	// Logger reaches the host's log with its level, under the plugin's name.
	Logger zerolog.Logger
	// Content registers long text once; requests then reference it.
	Content *Registry
}

// Segment is a piece of message text: inline text or a reference to
// content registered with Registry.Register.
type Segment struct {
	Text string
	Ref  string
}

// Text is an inline segment.
func Text(s string) Segment { return Segment{Text: s} }

// Message is one chat message.
type Message struct {
	Role    string
	Content []Segment
}

func System(segs ...Segment) Message    { return Message{Role: "system", Content: segs} }
func User(segs ...Segment) Message      { return Message{Role: "user", Content: segs} }
func Assistant(segs ...Segment) Message { return Message{Role: "assistant", Content: segs} }

// DefaultMaxTokens is the original's send_request default.
const DefaultMaxTokens = 128

// Request is one request for the host to send. Build it with Chat or
// Completion and the With* methods; each returns a modified copy.
type Request struct {
	ID         string
	Messages   []Message // chat
	Prompt     []Segment // completions
	Completion bool
	MaxTokens  int
	Tags       map[string]string
	// Scheduled is when the request was due, as an offset in its phase.
	// Unset, the host uses the offset at which the Step was due.
	Scheduled    time.Duration
	HasScheduled bool
}

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

// At records when the request was due (its scheduled offset in the phase),
// so dispatch lag (sent - scheduled) can be measured.
func (r Request) At(d time.Duration) Request { r.Scheduled, r.HasScheduled = d, true; return r }

// StepInput is what the host tells Step.
type StepInput struct {
	Phase    Phase
	Offset   time.Duration // since the phase started
	InFlight int           // this phase's requests sent and not yet delivered to OnFinished
}

type nextKind int

const (
	nextNow nextKind = iota
	nextWakeAt
	nextWakeAtOrFinish
	nextFinish
	nextDone
)

// StepOutput is Step's answer: requests to send now and when to call Step
// again. The zero value (and Send without a method) means "call again now".
type StepOutput struct {
	Requests []Request
	next     nextKind
	at       time.Duration
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
	}
	return "send [" + strings.Join(ids, " ") + "], then " + next
}

// WakeAt, WaitForFinish, WaitForFinishOr and Done are Send() followed by
// the method of the same name: nothing to send now.
func WakeAt(d time.Duration) StepOutput          { return StepOutput{}.WakeAt(d) }
func WaitForFinish() StepOutput                  { return StepOutput{}.WaitForFinish() }
func WaitForFinishOr(d time.Duration) StepOutput { return StepOutput{}.WaitForFinishOr(d) }
func Done() StepOutput                           { return StepOutput{}.Done() }

// Result is a finished request as measured by the host.
type Result struct {
	ID           string
	Phase        Phase
	Success      bool
	Error        string
	Text         string // response text; empty unless Definition.WantsResponseText
	TTFT         float64
	Latency      float64
	InputTokens  int
	OutputTokens int
	Finish       time.Duration // offset in the phase
}

// Workload decides what to send and when. The host calls Step and
// OnFinished from one loop, never concurrently, so no locks are needed.
type Workload interface {
	// Step returns requests to send now and when to be called next.
	Step(ctx context.Context, in StepInput) (StepOutput, error)
	// OnFinished receives every request finished since the last call (both
	// phases), before the next Step.
	OnFinished(ctx context.Context, results []Result) error
}

// Field is one line of the configuration banner.
type Field struct{ Label, Value string }

// Optional interfaces a Workload may implement.
type (
	// Bannerer returns the configuration banner printed before the run.
	Bannerer interface{ Banner() []Field }
	// Resolver returns derived settings (e.g. "num-documents") reported
	// with the resolved options.
	Resolver interface{ Resolved() map[string]any }
	// Planner returns how many measured requests will be sent (0 = unknown).
	Planner interface{ PlannedRequests() int }
)

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
	Defaults          O
	// New builds the workload from validated options. Return an
	// *option.FieldError to point at one option.
	New func(opts O, env Env) (Workload, error)
}
