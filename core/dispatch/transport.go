package dispatch

import (
	"context"
	"net/http"
	"runtime"
	"time"

	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/sdk/host/runloop"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Sender sends one request and measures it; it never fails, a failure is
// a Result. engine.Sender is the real one.
type Sender interface {
	Send(ctx context.Context, req engine.Request) engine.Result
}

var _ Sender = (*engine.Sender)(nil)

// Measured is what the host keeps of a sent request besides what the
// workload hears: the engine's timings, and the headers it was sent with
// (its traceparent).
type Measured struct {
	Result engine.Result
	Header http.Header
}

// Transport is the run loop's transport on the real clock: every request
// is sent on its own goroutine, so sending never waits for the loop, and
// results come back over a channel. A real run and lmbench calibrate
// both dispatch through it.
type Transport struct {
	sender  Sender
	header  func() http.Header // per request; nil = none
	ctx     context.Context    // of the sends: cancelled by Abandon
	abandon context.CancelFunc
	results chan runloop.Finished[Measured]
	timer   *time.Timer
	// sleepTimer is SleepUntil's, used on the loop's second goroutine
	// while a Step is in flight (never at the same time as timer's Wait).
	sleepTimer *time.Timer
	// IgnoreEOS asks every request for exactly its max tokens (--ignore-eos).
	IgnoreEOS bool
	// Seed, when set, goes with every request (a workload that asked for
	// deterministic decoding).
	Seed *int64
	// TopLogprobs asks every request for its first tokens'
	// log-probabilities (--record-logprobs; 0: none).
	TopLogprobs int
}

var _ runloop.Sleeper = (*Transport)(nil)

// New is the transport of one run over s; header, when set, gives each
// request's extra headers (its traceparent). Close it after the run.
func New(ctx context.Context, s Sender, header func() http.Header) *Transport {
	// Requests keep their own context: Ctrl-C stops stepping but lets
	// in-flight requests finish (until the drain timeout abandons them).
	sendCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	t, st := time.NewTimer(time.Hour), time.NewTimer(time.Hour)
	t.Stop()
	st.Stop()
	return &Transport{sender: s, header: header, ctx: sendCtx, abandon: cancel,
		results: make(chan runloop.Finished[Measured], 1024), timer: t, sleepTimer: st}
}

func (t *Transport) Now() time.Time { return time.Now() }

func (t *Transport) Send(out *runloop.Outgoing) {
	req := engineRequest(out)
	req.IgnoreEOS = req.IgnoreEOS || t.IgnoreEOS
	req.TopLogprobs = t.TopLogprobs
	if t.Seed != nil {
		req.Seed, req.HasSeed = *t.Seed, true
	}
	if t.header != nil {
		req.Header = t.header()
	}
	go func() {
		res := t.sender.Send(t.ctx, req)
		t.results <- runloop.Finished[Measured]{Req: out, Outcome: outcome(&res), Measured: Measured{Result: res, Header: req.Header}}
	}()
	// Let the request's goroutine run now, on this thread, until it has
	// written the request and waits for the engine: otherwise it waits
	// for the loop to block (tens of µs) before the request even leaves.
	runtime.Gosched()
}

func (t *Transport) Poll() []runloop.Finished[Measured] {
	var out []runloop.Finished[Measured]
	for {
		select {
		case f := <-t.results:
			out = append(out, f)
		default:
			return out
		}
	}
}

// preciseWait is the last stretch of a wait for a deadline, slept in the
// kernel: a Go timer wakes up to a millisecond late, and a request due at
// the deadline must not. Results and Ctrl-C wait out this much at most.
const preciseWait = 2 * time.Millisecond

func (t *Transport) Wait(ctx context.Context, until time.Time) []runloop.Finished[Measured] {
	var timeout <-chan time.Time
	if !until.IsZero() {
		d := time.Until(until)
		if d <= preciseWait {
			return t.waitPrecisely(until)
		}
		// Wake early, and sleep the rest precisely.
		t.timer.Reset(d - preciseWait)
		timeout = t.timer.C
		defer t.timer.Stop()
	}
	select {
	case f := <-t.results:
		// Take everything else already finished, so the workload hears of
		// simultaneous finishes together.
		return append([]runloop.Finished[Measured]{f}, t.Poll()...)
	case <-timeout:
		return t.waitPrecisely(until)
	case <-ctx.Done():
	}
	return nil
}

// SleepUntil sleeps until t (its last stretch precisely, in slices short
// enough to notice ctx), or until ctx is done: the loop sends the requests
// due while a Step is in flight with it.
func (t *Transport) SleepUntil(ctx context.Context, until time.Time) bool {
	if d := time.Until(until); d > preciseWait {
		t.sleepTimer.Reset(d - preciseWait)
		select {
		case <-t.sleepTimer.C:
		case <-ctx.Done():
			t.sleepTimer.Stop()
			return false
		}
	}
	for {
		if ctx.Err() != nil {
			return false
		}
		d := time.Until(until)
		if d <= 0 {
			return true
		}
		sleepPrecisely(min(d, 200*time.Microsecond))
	}
}

// waitPrecisely returns what has finished, or sleeps until until in the
// kernel when nothing has.
func (t *Transport) waitPrecisely(until time.Time) []runloop.Finished[Measured] {
	if fs := t.Poll(); len(fs) > 0 {
		return fs
	}
	if d := time.Until(until); d > 0 {
		sleepPrecisely(d)
	}
	return t.Poll()
}

func (t *Transport) Abandon() { t.abandon() }

// Close releases the transport: what is still in flight is cancelled.
func (t *Transport) Close() { t.abandon() }

// engineRequest is the request the engine sender sends for out.
func engineRequest(out *runloop.Outgoing) engine.Request {
	req := engine.Request{ID: out.ID, Prompt: out.Prompt, Completion: out.Completion, MaxTokens: out.MaxTokens, IgnoreEOS: out.IgnoreEOS}
	if len(out.Messages) > 0 {
		req.Messages = make([]engine.Message, len(out.Messages))
		for i, m := range out.Messages {
			req.Messages[i] = engine.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, ToolCalls: toolCalls(m.ToolCalls)}
		}
	}
	for _, tl := range out.Tools {
		req.Tools = append(req.Tools, engine.Tool{Name: tl.Name, Description: tl.Description, Parameters: tl.Parameters})
	}
	return req
}

func toolCalls(tcs []protocol.ToolCall) []engine.ToolCall {
	if len(tcs) == 0 {
		return nil
	}
	out := make([]engine.ToolCall, len(tcs))
	for i, tc := range tcs {
		out[i] = engine.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments}
	}
	return out
}

// outcome is what the workload hears of res.
func outcome(res *engine.Result) runloop.Outcome {
	o := runloop.Outcome{Success: res.Success, Error: res.Error, Text: res.Text, TTFT: res.TTFT(), Latency: res.Latency(),
		InputTokens: res.InputTokens, OutputTokens: res.OutputTokens, CachedTokens: res.CachedTokens, Finish: res.Finish}
	for _, tc := range res.ToolCalls {
		o.ToolCalls = append(o.ToolCalls, protocol.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
	}
	return o
}
