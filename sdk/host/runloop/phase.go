package runloop

import (
	"context"
	"fmt"
	"time"

	"github.com/lmbench/lmbench/sdk/protocol"
)

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
	p := &phaseRun[M]{loop: l, ctx: ctx, ph: ph, start: t.Now()}
	if cfg.Observer != nil {
		cfg.Observer.PhaseStarted(ph, p.start)
	}
	end = p.run()
	return p.start, end, p.steps, p.err
}

// phaseRun is the state of one phase: what is in flight, what the
// workload has not heard of yet, when it is to be stepped next, and how
// the phase is stopping. It lives for one call of phase, so it keeps that
// call's ctx.
type phaseRun[M any] struct {
	*loop[M]
	ctx   context.Context
	ph    protocol.Phase
	start time.Time
	steps int

	outstanding int               // sent, not finished
	undelivered []protocol.Result // finished, not yet told to the workload
	bytes       int               // of undelivered
	wake        wake              // when the next Step is due

	done      bool  // no more Steps: the workload said Done, or the phase is stopping
	err       error // the first error; the phase stops on it
	drainAt   time.Time
	abandoned bool
}

// wake is when the workload is to be stepped next.
type wake struct {
	// at is the phase offset of the next Step (never: only a finish brings
	// it). It is also when the requests of that Step count as due, on an
	// implicit schedule.
	at time.Duration
	// onFinish: a finish brings the Step forward to the moment it is seen,
	// once fewer than below requests are handed over (0: at any finish).
	onFinish bool
	below    int
}

// run turns the loop until the phase ends, and returns when it did.
func (p *phaseRun[M]) run() time.Time {
	for {
		p.deliver(p.cfg.Transport.Poll())
		if !p.stopping() {
			p.outstanding += p.releaseDue(p.outstanding)
		}
		switch {
		case !p.done && p.wake.at <= p.offset():
			p.step()
		case p.settled():
			return p.end()
		case p.stalled():
			p.stop(fmt.Errorf("%s phase: workload %s: %w", p.ph, p.cfg.Plugin, ErrStalled))
		default:
			p.deliver(p.wait())
		}
	}
}

func (p *phaseRun[M]) offset() time.Duration { return p.cfg.Transport.Now().Sub(p.start) }

// waiting counts what was handed over and has not gone out yet.
func (p *phaseRun[M]) waiting() int { return len(p.held) + len(p.timed) }

func (p *phaseRun[M]) stopping() bool { return p.err != nil || p.interrupted }

// settled: no more Steps and nothing in flight; what is still timed goes
// out first, unless the phase is stopping.
func (p *phaseRun[M]) settled() bool {
	return p.done && p.outstanding == 0 && (len(p.timed) == 0 || p.stopping())
}

// stalled: the workload waits for a finish that cannot come.
func (p *phaseRun[M]) stalled() bool {
	return !p.done && p.wake.at == never && p.outstanding == 0 && len(p.undelivered) == 0 && len(p.timed) == 0
}

// end closes the phase. Held requests left now were stopped by an error
// or Ctrl-C before a slot freed or they were due: never sent, so never
// measured.
func (p *phaseRun[M]) end() time.Time {
	p.unsent += p.waiting()
	p.held, p.timed = p.held[:0], p.timed[:0]
	p.flush()
	end := p.cfg.Transport.Now()
	if p.cfg.Observer != nil {
		p.cfg.Observer.PhaseEnded(p.ph, end)
	}
	return end
}

// stop ends the stepping and keeps the first error; after an error or
// an interruption the wait for what is in flight is bounded.
func (p *phaseRun[M]) stop(err error) {
	p.done = true
	if err != nil && p.err == nil {
		p.err = err
	}
	if p.drainAt.IsZero() && p.outstanding > 0 && p.stopping() {
		p.drainAt = p.cfg.Transport.Now().Add(p.cfg.DrainTimeout)
		if p.cfg.OnDrain != nil {
			p.cfg.OnDrain(p.outstanding, false)
		}
	}
}

// interrupt stops the phase for Ctrl-C (ctx done).
func (p *phaseRun[M]) interrupt() {
	p.interrupted = true
	p.stop(nil)
}

// fail stops the phase on a failed call to the workload: an interruption
// when ctx is done (the failure is its echo), else an error.
func (p *phaseRun[M]) fail(call string, err error) {
	if p.ctx.Err() != nil {
		p.interrupt()
		return
	}
	p.stop(fmt.Errorf("%s phase: %s: %w", p.ph, call, err))
}

// step calls the workload's Step, with the results it has not heard of
// when it takes them there, then dispatches what it returned and reads
// when to step it next.
func (p *phaseRun[M]) step() {
	if p.ctx.Err() != nil {
		p.interrupt()
		return
	}
	if p.cfg.MaxSteps > 0 && p.steps >= p.cfg.MaxSteps {
		p.stop(fmt.Errorf("%s phase: more than %d steps without finishing the phase", p.ph, p.cfg.MaxSteps))
		return
	}
	due := p.wake.at
	req := protocol.StepRequest{Phase: p.ph, Offset: p.offset()}
	if p.cfg.Capabilities.Has(protocol.FinishedInStep) {
		req.Finished = p.undelivered
	} else {
		p.flush()
		if p.done { // OnFinished failed
			return
		}
	}
	req.InFlight = p.outstanding + p.waiting()
	p.undelivered, p.bytes = nil, 0
	p.steps++
	sentDuring := p.sendDuringStep()
	asked := p.cfg.Transport.Now()
	resp, err := p.cfg.Workload.Step(p.ctx, req)
	if so, ok := p.cfg.Observer.(StepObserver); ok {
		so.Stepped(p.ph, p.cfg.Transport.Now().Sub(asked))
	}
	p.outstanding += sentDuring()
	if err != nil {
		p.fail("step", err)
		return
	}
	p.scored(resp.Scores)
	sent, err := p.dispatch(p.ph, p.start, due, p.outstanding, &resp)
	p.outstanding += sent
	if err != nil {
		p.stop(err)
		return
	}
	quiet := len(resp.Requests) == 0 && len(resp.Contents) == 0 && len(resp.Released) == 0
	w, ok := nextWake(resp.Next, p.offset(), quiet, p.outstanding+p.waiting())
	switch {
	case ok:
		p.wake = w
	case resp.Next.Kind == protocol.NextDone:
		p.stop(nil)
	default:
		p.stop(fmt.Errorf("%s phase: workload %s: step returned no next action", p.ph, p.cfg.Plugin))
	}
}

// nextWake reads a Step's next action, returned at phase offset now;
// quiet: that Step returned no requests, contents or releases; handedOver
// counts the requests in flight or waiting to go out. ok is false for
// Done and for no action at all.
//
// A wake-up time already past means at once: the requests of that Step
// count as due when the loop got to it, not earlier. "Call me again now"
// with nothing done is polling: a 1 ms tick, not a busy loop.
func nextWake(next protocol.Next, now time.Duration, quiet bool, handedOver int) (w wake, ok bool) {
	switch next.Kind {
	case protocol.NextWakeAt, protocol.NextWakeAtOrFinish:
		w = wake{at: max(next.At, now), onFinish: next.Kind == protocol.NextWakeAtOrFinish}
		if quiet && next.At <= now {
			w.at = now + time.Millisecond
		}
	case protocol.NextWaitForFinish:
		w = wake{at: never, onFinish: true}
	case protocol.NextWaitForInFlightBelow:
		w = wake{at: never, onFinish: true, below: max(next.InFlightBelow, 1)}
		if handedOver < w.below {
			// Already below: at once, or a 1 ms tick when this Step did
			// nothing (polling).
			w = wake{at: now}
			if quiet {
				w.at = now + time.Millisecond
			}
		}
	default:
		return wake{}, false
	}
	return w, true
}

// deliver takes in finished requests: their slots go to held requests,
// the observer sees each, and their results queue for the workload (a
// full batch goes to it at once). A finish the workload waits on brings
// its next Step forward to now.
func (p *phaseRun[M]) deliver(fs []Finished[M]) {
	if len(fs) == 0 {
		return
	}
	// Freed slots go to held requests first: the next request is what
	// a finish waits on. (So after an error recording these results,
	// the requests already released still go out, and are drained.)
	p.outstanding -= len(fs)
	if !p.stopping() {
		p.outstanding += p.release(p.outstanding)
	}
	for i := range fs {
		f := &fs[i]
		p.seq++
		f.Seq = p.seq
		if p.cfg.Observer != nil {
			if err := p.cfg.Observer.Finished(f); err != nil {
				p.stop(err)
			}
		}
		r := p.result(f, p.start)
		size := resultSize(&r)
		if p.bytes+size > p.cfg.BatchBytes {
			p.flush() // the rest travels with the next Step
		}
		p.undelivered = append(p.undelivered, r)
		p.bytes += size
	}
	if p.wake.onFinish && (p.wake.below == 0 || p.outstanding+p.waiting() < p.wake.below) {
		p.wake = wake{at: p.offset()}
	}
}

// flush tells the workload every result it has not heard of.
func (p *phaseRun[M]) flush() {
	p.tell(p.undelivered)
	p.undelivered, p.bytes = nil, 0
}

// tell hands results to the workload unless it has stopped listening
// (an error, or Ctrl-C: its context is cancelled, and a terminal's
// Ctrl-C may have stopped the plugin too).
func (p *phaseRun[M]) tell(results []protocol.Result) {
	if len(results) == 0 || p.stopping() {
		return
	}
	if sc, ok := p.cfg.Workload.(protocol.Scorer); ok && p.cfg.Capabilities.Has(protocol.Scores) {
		scores, err := sc.OnFinishedScored(p.ctx, results)
		if err != nil {
			p.fail("on finished", err)
		}
		p.scored(scores)
		return
	}
	if err := p.cfg.Workload.OnFinished(p.ctx, results); err != nil {
		p.fail("on finished", err)
	}
}

// scored hands the workload's scores to the observer, if it takes them.
func (p *phaseRun[M]) scored(scores []protocol.Score) {
	if len(scores) == 0 {
		return
	}
	if so, ok := p.cfg.Observer.(ScoreObserver); ok {
		so.Scored(scores)
	}
}

// wait waits for the next event and returns what finished meanwhile.
// Once interrupted, only the drain deadline ends the wait; past it, what
// is still in flight is abandoned.
func (p *phaseRun[M]) wait() []Finished[M] {
	t := p.cfg.Transport
	waitCtx := p.ctx
	if p.interrupted {
		waitCtx = context.WithoutCancel(p.ctx)
	}
	fs := t.Wait(waitCtx, p.until())
	if p.ctx.Err() != nil && !p.interrupted {
		p.interrupt()
	}
	if !p.drainAt.IsZero() && !p.abandoned && !t.Now().Before(p.drainAt) {
		p.abandoned = true
		if p.cfg.OnDrain != nil {
			p.cfg.OnDrain(p.outstanding, true)
		}
		t.Abandon()
	}
	return fs
}

// until is the deadline of the next wait (zero: none): the earliest of
// the next Step, the first request handed over ahead (unless stopping)
// and the drain deadline (until it has passed).
func (p *phaseRun[M]) until() time.Time {
	var until time.Time
	if !p.done && p.wake.at != never {
		until = p.start.Add(p.wake.at)
	}
	if len(p.timed) > 0 && !p.stopping() {
		if due := p.timed[0].out.Due; until.IsZero() || due.Before(until) {
			until = due
		}
	}
	if !p.drainAt.IsZero() && !p.abandoned && (until.IsZero() || p.drainAt.Before(until)) {
		until = p.drainAt
	}
	return until
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
		r.Text = o.Text
		if l.cfg.Capabilities.Has(protocol.ToolCalls) {
			r.ToolCalls = o.ToolCalls // the capability gates them
		}
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
