package runloop

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"strings"
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

// held is a request waiting until fewer than limit are in flight (0: no
// limit).
type held struct {
	out   *Outgoing
	limit int
}

// timed holds requests until they are due: a min-heap on the due time,
// in the order handed over among equal times. One timer (the transport's
// Wait deadline) serves them all.
type timed []timedReq

type timedReq struct {
	held
	seq int64
}

func (h timed) Len() int { return len(h) }
func (h timed) Less(i, j int) bool {
	if !h[i].out.Due.Equal(h[j].out.Due) {
		return h[i].out.Due.Before(h[j].out.Due)
	}
	return h[i].seq < h[j].seq
}
func (h timed) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timed) Push(x any)   { *h = append(*h, x.(timedReq)) }
func (h *timed) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = timedReq{}
	*h = old[:len(old)-1]
	return x
}

func (l *loop[M]) known(id string) (string, bool) {
	t, ok := l.content[id]
	return t, ok
}

// phase runs one phase. A phase ends when the workload said Done, every
// request it sent has finished, and the workload has heard of each.
func (l *loop[M]) phase(ctx context.Context, ph protocol.Phase) (start, end time.Time, steps int, err error) {
	cfg, t := l.cfg, l.cfg.Transport
	if cfg.BeforePhase != nil {
		if err := cfg.BeforePhase(ctx, ph); err != nil {
			now := t.Now()
			if ctx.Err() != nil {
				l.interrupted = true
				return now, now, 0, nil
			}
			return now, now, 0, fmt.Errorf("before the %s phase: %w", ph, err)
		}
	}
	start = t.Now()
	if cfg.Observer != nil {
		cfg.Observer.PhaseStarted(ph, start)
	}
	offset := func() time.Duration { return t.Now().Sub(start) }

	var (
		outstanding int               // sent, not finished
		undelivered []protocol.Result // finished, not yet told to the workload
		bytes       int               // of undelivered
		nextStep    time.Duration     // phase offset of the next Step
		dueAt       time.Duration     // when the next Step is due: what an implicit schedule records
		onFinish    bool
		below       int // with onFinish: step only once fewer are handed over (0: at any finish)
		done        bool
		stepErr     error
		drainAt     time.Time
		abandoned   bool
	)
	// waiting counts what was handed over and has not gone out yet.
	waiting := func() int { return len(l.held) + len(l.timed) }
	stopping := func() bool { return stepErr != nil || l.interrupted }
	// stop ends the stepping and keeps the first error; after an error or
	// an interruption the wait for what is in flight is bounded.
	stop := func(err error) {
		done = true
		if err != nil && stepErr == nil {
			stepErr = err
		}
		if drainAt.IsZero() && outstanding > 0 && (stepErr != nil || l.interrupted) {
			drainAt = t.Now().Add(cfg.DrainTimeout)
			if cfg.OnDrain != nil {
				cfg.OnDrain(outstanding, false)
			}
		}
	}
	// tell hands results to the workload unless it has stopped listening
	// (an error, or Ctrl-C: its context is cancelled, and a terminal's
	// Ctrl-C may have stopped the plugin too).
	tell := func(results []protocol.Result) {
		if len(results) == 0 || stepErr != nil || l.interrupted {
			return
		}
		if err := cfg.Workload.OnFinished(ctx, results); err != nil {
			if ctx.Err() != nil {
				l.interrupted = true
				stop(nil)
			} else {
				stop(fmt.Errorf("%s phase: on finished: %w", ph, err))
			}
		}
	}
	flush := func() {
		tell(undelivered)
		undelivered, bytes = nil, 0
	}
	record := func(fs []Finished[M]) {
		if len(fs) == 0 {
			return
		}
		// Freed slots go to held requests first: the next request is what
		// a finish waits on. (So after an error recording these results,
		// the requests already released still go out, and are drained.)
		outstanding -= len(fs)
		if stepErr == nil && !l.interrupted {
			outstanding += l.release(outstanding)
		}
		for i := range fs {
			f := &fs[i]
			l.seq++
			f.Seq = l.seq
			if cfg.Observer != nil {
				if err := cfg.Observer.Finished(f); err != nil {
					stop(err)
				}
			}
			r := l.result(f, start)
			size := resultSize(&r)
			if bytes+size > cfg.BatchBytes {
				flush() // the rest travels with the next Step
			}
			undelivered = append(undelivered, r)
			bytes += size
		}
		if len(fs) > 0 && onFinish && (below == 0 || outstanding+waiting() < below) {
			nextStep, onFinish, below = offset(), false, 0
			dueAt = nextStep
		}
	}

	for {
		record(t.Poll())
		if !stopping() {
			outstanding += l.releaseDue(outstanding)
		}
		if !done && nextStep <= offset() {
			if ctx.Err() != nil {
				l.interrupted = true
				stop(nil)
				continue
			}
			if cfg.MaxSteps > 0 && steps >= cfg.MaxSteps {
				stop(fmt.Errorf("%s phase: more than %d steps without finishing the phase", ph, cfg.MaxSteps))
				continue
			}
			due := dueAt
			req := protocol.StepRequest{Phase: ph, Offset: offset()}
			if cfg.Capabilities.Has(protocol.FinishedInStep) {
				req.Finished = undelivered
			} else {
				flush()
				if done { // OnFinished failed
					continue
				}
			}
			req.InFlight = outstanding + waiting()
			undelivered, bytes = nil, 0
			steps++
			sentDuring := l.sendDuringStep()
			resp, err := cfg.Workload.Step(ctx, req)
			outstanding += sentDuring()
			if err != nil {
				if ctx.Err() != nil {
					l.interrupted = true
					stop(nil)
				} else {
					stop(fmt.Errorf("%s phase: step: %w", ph, err))
				}
				continue
			}
			sent, err := l.dispatch(ph, start, due, outstanding, &resp)
			outstanding += sent
			if err != nil {
				stop(err)
				continue
			}
			now := offset()
			// "Call me again now" with nothing done is polling: a 1 ms
			// tick, not a busy loop.
			idle := len(resp.Requests) == 0 && len(resp.Contents) == 0 && len(resp.Released) == 0 && resp.Next.At <= now
			below = 0
			switch resp.Next.Kind {
			case protocol.NextWakeAt:
				nextStep, onFinish = max(resp.Next.At, now), false
				if idle {
					nextStep = now + time.Millisecond
				}
			case protocol.NextWakeAtOrFinish:
				nextStep, onFinish = max(resp.Next.At, now), true
				if idle {
					nextStep = now + time.Millisecond
				}
			case protocol.NextWaitForFinish:
				nextStep, onFinish = never, true
			case protocol.NextWaitForInFlightBelow:
				nextStep, onFinish, below = never, true, max(resp.Next.InFlightBelow, 1)
				if outstanding+waiting() < below {
					// Already below: at once, or a 1 ms tick when this Step
					// did nothing (polling).
					nextStep, onFinish, below = now, false, 0
					if len(resp.Requests) == 0 && len(resp.Contents) == 0 && len(resp.Released) == 0 {
						nextStep = now + time.Millisecond
					}
				}
			case protocol.NextDone:
				stop(nil)
			default:
				stop(fmt.Errorf("%s phase: workload %s: step returned no next action", ph, cfg.Plugin))
			}
			// A wake-up time already past means at once: the requests of
			// that Step count as due when the loop got to it, not earlier.
			dueAt = nextStep
			continue
		}
		if done && outstanding == 0 && (len(l.timed) == 0 || stopping()) {
			// Held requests left now were stopped by an error or Ctrl-C
			// before a slot freed or they were due: never sent, so never
			// measured.
			l.unsent += waiting()
			l.held, l.timed = l.held[:0], l.timed[:0]
			flush()
			end = t.Now()
			if cfg.Observer != nil {
				cfg.Observer.PhaseEnded(ph, end)
			}
			return start, end, steps, stepErr
		}
		if !done && nextStep == never && outstanding == 0 && len(undelivered) == 0 && len(l.timed) == 0 {
			stop(fmt.Errorf("%s phase: workload %s: %w", ph, cfg.Plugin, ErrStalled))
			continue
		}
		// Wait for the next event.
		var until time.Time
		if !done {
			until = start.Add(nextStep)
			if nextStep == never {
				until = time.Time{}
			}
		}
		if len(l.timed) > 0 && !stopping() {
			if due := l.timed[0].out.Due; until.IsZero() || due.Before(until) {
				until = due
			}
		}
		if !drainAt.IsZero() && !abandoned && (until.IsZero() || drainAt.Before(until)) {
			until = drainAt
		}
		waitCtx := ctx
		if l.interrupted {
			waitCtx = context.WithoutCancel(ctx) // only the drain deadline ends the wait now
		}
		fs := t.Wait(waitCtx, until)
		if ctx.Err() != nil && !l.interrupted {
			l.interrupted = true
			stop(nil)
		}
		if !drainAt.IsZero() && !abandoned && !t.Now().Before(drainAt) {
			abandoned = true
			if cfg.OnDrain != nil {
				cfg.OnDrain(outstanding, true)
			}
			t.Abandon()
		}
		record(fs)
	}
}

// result is what the workload hears of f.
func (l *loop[M]) result(f *Finished[M], start time.Time) protocol.Result {
	o := &f.Outcome
	r := protocol.Result{
		ID: f.Req.ID, Phase: f.Req.Phase, Success: o.Success, Error: o.Error,
		TTFT: o.TTFT, Latency: o.Latency, InputTokens: o.InputTokens, OutputTokens: o.OutputTokens,
		CachedTokens: o.CachedTokens, Finish: o.Finish.Sub(start),
	}
	if l.cfg.WantsText {
		r.Text, r.ToolCalls = o.Text, o.ToolCalls
	}
	return r
}

func resultSize(r *protocol.Result) int {
	n := len(r.Text) + len(r.Error) + len(r.ID) + 64
	for _, tc := range r.ToolCalls {
		n += len(tc.ID) + len(tc.Name) + len(tc.Arguments) + 16
	}
	return n
}

// dispatch registers the response's content, checks and resolves its
// requests, sends them (or holds them for a slot), then drops released
// content. It returns how many were sent; on an invalid request the ones
// before it still go.
func (l *loop[M]) dispatch(ph protocol.Phase, start time.Time, due time.Duration, outstanding int, resp *protocol.StepResponse) (int, error) {
	for _, c := range resp.Contents {
		if err := l.check.CheckContent(c, l.known); err != nil {
			return 0, fmt.Errorf("%s phase: %w", ph, err)
		}
		l.content[c.ID] = c.Text
	}
	sent := 0
	for i := range resp.Requests {
		r := &resp.Requests[i]
		if err := l.check.Check(r, l.known); err != nil {
			return sent, fmt.Errorf("%s phase: %w", ph, err)
		}
		out := l.resolve(ph, r)
		out.Due, out.Explicit = start.Add(due), r.HasScheduled
		if r.HasScheduled {
			out.Due = start.Add(r.Scheduled)
		}
		h := held{out: out, limit: l.limit(r.MaxInFlight)}
		if r.HasScheduled && out.Due.After(l.cfg.Transport.Now()) {
			// Handed over ahead: it goes out when due, with no Step in
			// between.
			l.timedSeq++
			heap.Push(&l.timed, timedReq{held: h, seq: l.timedSeq})
			continue
		}
		if l.hold(h, outstanding+sent) {
			continue
		}
		l.send(out)
		sent++
	}
	for _, id := range resp.Released {
		delete(l.content, id)
	}
	return sent, nil
}

// sendDuringStep sends, on a second goroutine, the requests handed over
// ahead that fall due before the returned function is called (once the
// Step is back); it returns how many were sent. It stops at one that
// waits for a slot: what frees it is a finish, which the loop handles.
// Without a Sleeper transport it does nothing.
func (l *loop[M]) sendDuringStep() func() int {
	sl, ok := l.cfg.Transport.(Sleeper)
	if !ok || len(l.timed) == 0 || l.timed[0].limit > 0 {
		return func() int { return 0 }
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		n := 0
		defer func() { done <- n }()
		for len(l.timed) > 0 && l.timed[0].limit <= 0 {
			due := l.timed[0].out.Due
			if !sl.SleepUntil(ctx, due) {
				return
			}
			l.send(heap.Pop(&l.timed).(timedReq).out)
			n++
		}
	}()
	return func() int {
		cancel()
		return <-done
	}
}

// limit is the in-flight limit of a request with MaxInFlight m: the
// tighter of m and the run's MaxConcurrency (0: none).
func (l *loop[M]) limit(m int) int {
	c := l.cfg.MaxConcurrency
	switch {
	case m <= 0:
		return max(c, 0)
	case c > 0:
		return min(m, c)
	}
	return m
}

// hold queues h for a slot when it must wait: its limit is reached, or
// requests before it are already waiting (order is kept). A request with
// no limit never waits.
func (l *loop[M]) hold(h held, inFlight int) bool {
	if h.limit > 0 && (len(l.held) > 0 || inFlight >= h.limit) {
		l.held = append(l.held, h)
		return true
	}
	return false
}

// releaseDue sends the requests handed over ahead that are due by now (or
// queues them for a slot); it returns how many were sent.
func (l *loop[M]) releaseDue(outstanding int) int {
	if len(l.timed) == 0 {
		return 0
	}
	now := l.cfg.Transport.Now()
	n := 0
	for len(l.timed) > 0 && !l.timed[0].out.Due.After(now) {
		h := heap.Pop(&l.timed).(timedReq).held
		if l.hold(h, outstanding+n) {
			continue
		}
		l.send(h.out)
		n++
	}
	return n
}

func (l *loop[M]) send(out *Outgoing) {
	if l.cfg.Observer != nil {
		l.cfg.Observer.Sent(out)
	}
	l.cfg.Transport.Send(out)
}

// release sends held requests, in order, while slots are free; a request
// with no schedule of its own counts as due now, when its slot freed.
func (l *loop[M]) release(outstanding int) int {
	n := 0
	for len(l.held) > 0 && outstanding+n < l.held[0].limit {
		out := l.held[0].out
		if !out.Explicit {
			out.Due = l.cfg.Transport.Now()
		}
		l.held = l.held[1:]
		l.send(out)
		n++
	}
	if len(l.held) == 0 {
		l.held = nil
	}
	return n
}

// resolve builds the outgoing request; Check has vouched for every reference.
func (l *loop[M]) resolve(ph protocol.Phase, r *protocol.Request) *Outgoing {
	out := &Outgoing{Phase: ph, ID: r.ID, MaxTokens: r.MaxTokens, Tags: r.Tags, Completion: r.Completion, Tools: r.Tools,
		ExpectedCachedTokens: r.ExpectedCachedTokens, HasExpectedCached: r.HasExpectedCached, TargetTier: r.TargetTier,
		PromptTokens: r.PromptTokens, IgnoreEOS: r.IgnoreEOS}
	if r.Completion {
		out.Prompt = l.text(r.Prompt)
		return out
	}
	out.Messages = make([]Message, len(r.Messages))
	for i, m := range r.Messages {
		out.Messages[i] = Message{Role: m.Role, Content: l.text(m.Content), ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
	}
	return out
}

func (l *loop[M]) text(segs []protocol.Segment) string {
	if len(segs) == 1 {
		if segs[0].Ref == "" {
			return segs[0].Text
		}
		return l.content[segs[0].Ref]
	}
	n := 0
	for _, s := range segs {
		if s.Ref != "" {
			n += len(l.content[s.Ref])
		} else {
			n += len(s.Text)
		}
	}
	var b strings.Builder
	b.Grow(n)
	for _, s := range segs {
		if s.Ref != "" {
			b.WriteString(l.content[s.Ref])
		} else {
			b.WriteString(s.Text)
		}
	}
	return b.String()
}
