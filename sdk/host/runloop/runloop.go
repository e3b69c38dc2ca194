package runloop

import (
	"context"
	"errors"
	"time"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// Message is a chat message with its text resolved.
type Message struct {
	Role       string
	Content    string
	ToolCalls  []protocol.ToolCall
	ToolCallID string
}

// Outgoing is a request as it goes to the engine: checked, its text
// resolved, its due time fixed.
type Outgoing struct {
	Phase      protocol.Phase
	ID         string
	Messages   []Message
	Prompt     string
	Completion bool
	MaxTokens  int
	Tags       map[string]string
	Tools      []protocol.Tool
	// PromptTokens is the prompt's length the workload stated (0: none).
	PromptTokens int
	// IgnoreEOS: exactly MaxTokens output tokens (protocol.Request's field).
	IgnoreEOS bool
	// Due is when the request was due. Explicit: the workload set it
	// (Request.At); otherwise it is when the Step that returned it was due.
	Due      time.Time
	Explicit bool
	// The reuse the workload expects (protocol.Request's fields of the
	// same names; the ExpectedReuse capability).
	ExpectedCachedTokens int
	HasExpectedCached    bool
	TargetTier           string
}

// Outcome is what the workload hears of a finished request.
type Outcome struct {
	Success bool
	Error   string
	// Text and ToolCalls are the answer; the loop passes them on only to a
	// workload that wants response text.
	Text         string
	ToolCalls    []protocol.ToolCall
	TTFT         float64 // seconds; -1 for a failed request
	Latency      float64 // seconds
	InputTokens  int
	OutputTokens int
	CachedTokens int // usage.prompt_tokens_details.cached_tokens
	Finish       time.Time
}

// Finished is a finished request: what was sent, what the workload hears,
// and the transport's own measurement M (the host's HTTP timings).
type Finished[M any] struct {
	Req      *Outgoing
	Seq      int64 // completion order in the run, from 1
	Outcome  Outcome
	Measured M
}

// Transport is the clock and the sender.
type Transport[M any] interface {
	// Now is the current time.
	Now() time.Time
	// Send starts sending req. It must not block on the engine: the
	// request's result comes back, once, from Poll or Wait.
	Send(req *Outgoing)
	// Poll returns what has finished by now, without waiting.
	Poll() []Finished[M]
	// Wait returns once something finished (all that has, by then), at
	// until (zero: no deadline), or when ctx is done; it may return early
	// with nothing.
	Wait(ctx context.Context, until time.Time) []Finished[M]
	// Abandon cancels every request in flight; each still comes back (as
	// failed) from Poll or Wait.
	Abandon()
}

// Sleeper is an optional Transport method for a transport on a clock that
// moves by itself (the real one): SleepUntil returns true at t, or false
// once ctx is done first. With it the loop sends requests handed over
// ahead while a Step is in flight, so sending never waits for the plugin;
// a virtual clock does not move during a Step, so it needs none.
type Sleeper interface {
	SleepUntil(ctx context.Context, t time.Time) bool
}

// Observer receives the loop's events, one at a time: from the loop's
// goroutine, except Sent for a request handed over ahead that falls due
// while a Step is in flight (the loop is then waiting for the Step).
type Observer[M any] interface {
	// PhaseStarted is called as a phase begins.
	PhaseStarted(phase protocol.Phase, start time.Time)
	// Sent is called as each request is handed to the transport.
	Sent(req *Outgoing)
	// Finished is called for every finished request as soon as the loop
	// sees it, before the workload hears of it. An error stops the run
	// (after draining: nothing sent is lost).
	Finished(f *Finished[M]) error
	// PhaseEnded is called once every request of the phase has finished
	// and the workload has heard of it.
	PhaseEnded(phase protocol.Phase, end time.Time)
}

// ScoreObserver is an optional Observer method: the scores the workload
// gave answers it heard of (the Scores capability), as they arrive, each
// after its request's Finished.
type ScoreObserver interface {
	Scored(scores []protocol.Score)
}

// StepObserver is an optional Observer method: how long each Step took
// the workload to answer, by the transport's clock, so a host can tell a
// slow plugin from a saturated client when requests go out late.
type StepObserver interface {
	Stepped(phase protocol.Phase, took time.Duration)
}

// Config of a run.
type Config[M any] struct {
	Workload  protocol.WorkloadService
	Transport Transport[M]
	Observer  Observer[M] // nil: none
	// Plugin names the workload in errors.
	Plugin string
	// WantsText delivers response text and tool calls to the workload.
	WantsText bool
	// Capabilities negotiated with the workload (FinishedInStep changes
	// how results travel, not when the workload hears of them).
	Capabilities protocol.Capabilities
	// DrainTimeout bounds the wait for in-flight requests after an
	// interruption or an error (default 30 s); then they are abandoned.
	DrainTimeout time.Duration
	// MaxSteps stops a phase that takes more Steps (0: no limit).
	MaxSteps int
	// BatchBytes caps the results of one delivery (default 8 MiB).
	BatchBytes int
	// OnDrain is called when the loop starts waiting out in-flight
	// requests after an interruption or error, and when it abandons them.
	OnDrain func(inFlight int, abandoned bool)
	// MaxConcurrency caps the requests of a phase in flight (0: no cap):
	// a request due while the cap is reached waits for a slot, in order,
	// and the wait shows in its dispatch lag (send - due).
	MaxConcurrency int
	// BeforePhase, when set, is called before each phase starts; the
	// phase starts when it returns (a sharded run's shards wait there for
	// one another, so their measured phases, and schedules, start
	// together). An error stops the run before the phase; ctx ending
	// while it waits interrupts it.
	BeforePhase func(ctx context.Context, phase protocol.Phase) error
}

// Outcome of a run.
type Result struct {
	Interrupted bool // ctx was cancelled
	// MeasureStart and MeasureEnd bound the measured phase (zero if it never started).
	MeasureStart, MeasureEnd time.Time
	// Steps counts Step calls per phase.
	WarmupSteps, MeasureSteps int
	// WarmupElapsed and MeasureElapsed are the phases' durations.
	WarmupElapsed, MeasureElapsed time.Duration
	// Unsent counts requests held for a slot (Request.MaxInFlight,
	// Config.MaxConcurrency) or for their due time (a future
	// Request.Scheduled) that were never sent because the run stopped (an
	// error, Ctrl-C) first.
	Unsent int
}

// ErrStalled is returned when a workload waits for a finish with nothing in flight.
var ErrStalled = errors.New("the workload waits for a request to finish, but none is in flight")

// DefaultBatchBytes caps one delivery of results.
const DefaultBatchBytes = 8 << 20

const never = time.Duration(1<<63 - 1)

// Run runs both phases. It returns when the workload is done and every
// request has finished, when ctx is cancelled (after draining in-flight
// requests; Result.Interrupted), or on an error (also after draining).
func Run[M any](ctx context.Context, cfg Config[M]) (res Result, err error) {
	if cfg.DrainTimeout == 0 {
		cfg.DrainTimeout = 30 * time.Second
	}
	if cfg.BatchBytes == 0 {
		cfg.BatchBytes = DefaultBatchBytes
	}
	l := &loop[M]{cfg: cfg, content: map[string]string{}, check: protocol.NewValidator(cfg.Plugin)}
	l.check.NoToolCalls = !cfg.Capabilities.Has(protocol.ToolCalls)
	defer l.check.Close()
	defer func() { res.Unsent = l.unsent }()
	for _, ph := range protocol.Phases {
		var start, end time.Time
		var steps int
		start, end, steps, err = l.phase(ctx, ph)
		switch ph {
		case protocol.Warmup:
			res.WarmupSteps, res.WarmupElapsed = steps, end.Sub(start)
		case protocol.Measure:
			res.MeasureSteps, res.MeasureElapsed = steps, end.Sub(start)
			res.MeasureStart, res.MeasureEnd = start, end
		}
		if err != nil || l.interrupted {
			res.Interrupted = l.interrupted
			return res, err
		}
	}
	return res, nil
}

type loop[M any] struct {
	cfg         Config[M]
	content     map[string]string
	check       *protocol.Validator
	seq         int64
	interrupted bool
	held        []held // requests waiting for a slot (Request.MaxInFlight)
	timed       timed  // requests handed over before they are due
	timedSeq    int64
	unsent      int // held requests the run stopped before sending
}

func (l *loop[M]) known(id string) (string, bool) {
	t, ok := l.content[id]
	return t, ok
}
