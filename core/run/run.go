// Package run is the host's run loop: it steps a workload through its
// WARMUP and MEASURE phases on the real clock, sends what the workload
// returns through the engine sender, and hands every finished request to
// the host's observers (journal, stats, exporters, progress) before the
// workload learns of it. One goroutine drives the loop; each request is
// sent on its own goroutine, so sending never waits for the loop.
package run

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/sdk/handshake"
	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
)

// Workload is the part of the workload protocol the loop uses. The plugin
// client satisfies it through an adapter; tests use fakes.
type Workload interface {
	Step(ctx context.Context, req *workloadv1.StepRequest) (*workloadv1.StepResponse, error)
	OnFinished(ctx context.Context, req *workloadv1.OnFinishedRequest) (*workloadv1.OnFinishedResponse, error)
}

// Sender sends one request and measures it; it never fails, a failure is a Result.
type Sender interface {
	Send(ctx context.Context, req engine.Request) engine.Result
}

// Finished is one finished request as the loop saw it.
type Finished struct {
	Phase     workloadv1.Phase
	Seq       int64 // completion order in the run, from 1
	ID        string
	Tags      map[string]string
	Scheduled time.Time // when it was due (carries the monotonic reading)
	// Scheduled came from the workload (an explicit schedule, e.g. k/qps),
	// not from when its Step was due.
	ExplicitSchedule bool
	Result           engine.Result
	// What was sent besides the prompt: max_tokens, the endpoint, and the
	// extra headers from Config.RequestHeader (nil without).
	MaxTokens  int
	Completion bool
	Header     http.Header
}

// Observer receives the loop's events, all from the loop goroutine.
type Observer interface {
	// PhaseStarted is called as a phase begins (the host resets its stats
	// and clock on MEASURE).
	PhaseStarted(phase workloadv1.Phase, start time.Time)
	// Sent is called as each request is handed to the sender.
	Sent(phase workloadv1.Phase, id string)
	// Finished is called for every finished request, before the workload
	// hears of it. An error aborts the run (e.g. the journal cannot be written).
	Finished(f *Finished) error
	// PhaseEnded is called once every request of the phase has finished.
	PhaseEnded(phase workloadv1.Phase, end time.Time)
}

// Config of a run.
type Config struct {
	Workload  Workload
	Sender    Sender
	Observer  Observer
	Log       zerolog.Logger
	WantsText bool // deliver response text to the workload
	// DrainTimeout bounds the wait for in-flight requests after an
	// interruption or a workload failure (default 30 s); then they are
	// cancelled and recorded as failed.
	DrainTimeout time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// RequestHeader, when set, is called on the loop goroutine for each
	// request as it is handed to the Sender; the headers it returns go with
	// the request (the W3C traceparent of its span) and come back in
	// Finished.Header. Nil (tracing off) sends none and costs nothing.
	RequestHeader func() http.Header
}

// Outcome says how the run ended.
type Outcome struct {
	Interrupted bool // ctx was cancelled (Ctrl-C)
	// MeasureStart and MeasureEnd bound the measured phase (zero if it never started).
	MeasureStart, MeasureEnd time.Time
}

// ErrStalled is returned when a workload waits for a finish with nothing in flight.
var ErrStalled = errors.New("workload is waiting for a request to finish, but none is in flight")

// Run runs both phases. It returns when the workload is done and every
// request has finished, when ctx is cancelled (after draining in-flight
// requests, Outcome.Interrupted), or on a workload or observer error (also
// after draining: nothing sent is lost).
func Run(ctx context.Context, cfg Config) (Outcome, error) {
	if cfg.DrainTimeout == 0 {
		cfg.DrainTimeout = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	l := &loop{cfg: cfg, content: map[string]string{}, results: make(chan *Finished, 1024)}
	var out Outcome
	for _, ph := range []workloadv1.Phase{workloadv1.Phase_PHASE_WARMUP, workloadv1.Phase_PHASE_MEASURE} {
		start, end, err := l.phase(ctx, ph)
		if ph == workloadv1.Phase_PHASE_MEASURE && !start.IsZero() {
			out.MeasureStart, out.MeasureEnd = start, end
		}
		if err != nil || l.interrupted {
			out.Interrupted = l.interrupted
			return out, err
		}
	}
	return out, nil
}

type loop struct {
	cfg         Config
	content     map[string]string
	results     chan *Finished
	seq         int64
	interrupted bool
}

const never = time.Duration(1<<63 - 1)

func phaseName(p workloadv1.Phase) string {
	return strings.ToLower(strings.TrimPrefix(p.String(), "PHASE_"))
}

func (l *loop) phase(ctx context.Context, ph workloadv1.Phase) (start, end time.Time, err error) {
	cfg := l.cfg
	start = cfg.Now()
	cfg.Observer.PhaseStarted(ph, start)
	cfg.Log.Info().Str("phase", phaseName(ph)).Msg("phase started")

	// Requests keep their own context: Ctrl-C stops stepping but lets
	// in-flight requests finish (bounded by DrainTimeout).
	sendCtx, cancelSends := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelSends()

	var (
		inflight   int
		nextStep   time.Duration // phase offset of the next Step; 0 = now
		onFinish   bool
		done       bool
		stepErr    error
		batch      []*Finished
		timer      = time.NewTimer(never)
		drainTimer <-chan time.Time
		draining   bool
		ctxDone    = ctx.Done()
	)
	defer timer.Stop()

	// stopStepping ends the stepping, keeps the first error, and bounds the
	// wait for in-flight requests when stopping on an error or Ctrl-C. It
	// also acts after the workload has said it is done: the tail of every
	// run (all sent, some in flight) must be as interruptible as the rest,
	// and an error recording that tail must not be lost.
	stopStepping := func(err error) {
		done = true
		if err != nil && stepErr == nil {
			stepErr = err
		}
		if !draining && inflight > 0 && (err != nil || l.interrupted) {
			draining = true
			cfg.Log.Warn().Int("in_flight", inflight).Str("timeout", cfg.DrainTimeout.String()).Msg("waiting for in-flight requests")
			drainTimer = time.After(cfg.DrainTimeout)
		}
	}

	for {
		// 1. Record what finished, then tell the workload.
		if len(batch) > 0 {
			for _, f := range batch {
				l.seq++
				f.Seq = l.seq
				if err := cfg.Observer.Finished(f); err != nil {
					stopStepping(err)
				}
			}
			inflight -= len(batch)
			// After Ctrl-C the workload is not stepped again, so it is not
			// told either (its context is cancelled, and a terminal's
			// Ctrl-C may have stopped the plugin too).
			if stepErr == nil && !l.interrupted {
				if err := l.deliver(ctx, batch); err != nil {
					stopStepping(err)
				}
			}
			batch = batch[:0]
			if onFinish {
				nextStep, onFinish = l.offset(start), false
			}
		}
		// 2. Step when due.
		if !done && nextStep <= l.offset(start) {
			due := nextStep
			resp, err := cfg.Workload.Step(ctx, &workloadv1.StepRequest{
				Phase: ph, OffsetNs: int64(l.offset(start)), InFlight: uint32(inflight),
			})
			if err != nil {
				if ctx.Err() != nil {
					l.interrupted = true
					stopStepping(nil)
				} else {
					stopStepping(fmt.Errorf("step: %w", err))
				}
				continue
			}
			for _, c := range resp.GetContents() {
				l.content[c.GetId()] = c.GetText()
			}
			for _, r := range resp.GetRequests() {
				if err := l.dispatch(sendCtx, ph, start, due, r); err != nil {
					stopStepping(err)
					break
				}
				inflight++
			}
			switch nx := resp.GetNext().(type) {
			case *workloadv1.StepResponse_WakeAtNs:
				nextStep, onFinish = time.Duration(nx.WakeAtNs), false
				if len(resp.GetRequests()) == 0 && nextStep <= l.offset(start) {
					// "Call me again now" with nothing sent is polling: give
					// it a 1 ms tick (as sdktest does) instead of a busy loop.
					nextStep = l.offset(start) + time.Millisecond
				}
			case *workloadv1.StepResponse_WakeAtOrOnFinishNs:
				nextStep, onFinish = time.Duration(nx.WakeAtOrOnFinishNs), true
			case *workloadv1.StepResponse_WaitForFinish:
				nextStep, onFinish = never, true
				if inflight == 0 {
					stopStepping(ErrStalled)
				}
			case *workloadv1.StepResponse_Done:
				stopStepping(nil)
			default:
				stopStepping(errors.New("step returned no next action"))
			}
			continue
		}
		if done && inflight == 0 {
			end = cfg.Now()
			cfg.Observer.PhaseEnded(ph, end)
			cfg.Log.Info().Str("phase", phaseName(ph)).Msg("phase complete")
			return start, end, stepErr
		}
		// 3. Wait for the next event.
		if !done {
			timer.Reset(max(nextStep-l.offset(start), 0))
		}
		select {
		case f := <-l.results:
			batch = append(batch, f)
			// Take everything else already finished, so the workload hears
			// of simultaneous finishes in one call.
			for more := true; more; {
				select {
				case f := <-l.results:
					batch = append(batch, f)
				default:
					more = false
				}
			}
		case <-timer.C:
		case <-ctxDone:
			ctxDone = nil
			l.interrupted = true
			cfg.Log.Warn().Msg("interrupted: no new requests will be sent")
			stopStepping(nil)
		case <-drainTimer:
			drainTimer = nil
			cfg.Log.Warn().Int("in_flight", inflight).Msg("drain timeout: cancelling in-flight requests (recorded as failed)")
			cancelSends()
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

func (l *loop) offset(start time.Time) time.Duration { return l.cfg.Now().Sub(start) }

// deliver sends finished requests to the workload in batches capped by bytes.
func (l *loop) deliver(ctx context.Context, batch []*Finished) error {
	var (
		out   []*workloadv1.Result
		bytes int
	)
	flush := func() error {
		if len(out) == 0 {
			return nil
		}
		_, err := l.cfg.Workload.OnFinished(ctx, &workloadv1.OnFinishedRequest{Results: out})
		out, bytes = nil, 0
		if err != nil {
			return fmt.Errorf("on finished: %w", err)
		}
		return nil
	}
	for _, f := range batch {
		r := f.Result
		pr := &workloadv1.Result{
			Id: f.ID, Phase: f.Phase, Success: r.Success, Error: r.Error,
			TtftS: r.TTFT(), LatencyS: r.Latency(),
			InputTokens: int64(r.InputTokens), OutputTokens: int64(r.OutputTokens),
		}
		if l.cfg.WantsText {
			pr.Text = r.Text
		}
		size := len(pr.Text) + len(pr.Error) + len(pr.Id) + 64
		if bytes+size > handshake.BatchBytes {
			if err := flush(); err != nil {
				return err
			}
		}
		out = append(out, pr)
		bytes += size
	}
	return flush()
}

func (l *loop) dispatch(ctx context.Context, ph workloadv1.Phase, start time.Time, due time.Duration, r *workloadv1.Request) error {
	req := engine.Request{ID: r.GetId(), MaxTokens: int(r.GetMaxTokens())}
	switch body := r.GetBody().(type) {
	case *workloadv1.Request_Chat:
		req.Messages = make([]engine.Message, len(body.Chat.GetMessages()))
		for i, m := range body.Chat.GetMessages() {
			text, err := l.text(r.GetId(), m.GetContent())
			if err != nil {
				return err
			}
			req.Messages[i] = engine.Message{Role: m.GetRole(), Content: text}
		}
	case *workloadv1.Request_Completion:
		text, err := l.text(r.GetId(), body.Completion.GetPrompt())
		if err != nil {
			return err
		}
		req.Prompt, req.Completion = text, true
	default:
		return fmt.Errorf("request %q has neither chat messages nor a prompt", r.GetId())
	}
	if req.MaxTokens <= 0 {
		return fmt.Errorf("request %q: max_tokens must be >= 1, got %d", r.GetId(), req.MaxTokens)
	}
	scheduled, explicit := start.Add(due), r.ScheduledNs != nil
	if explicit {
		scheduled = start.Add(time.Duration(r.GetScheduledNs()))
	}
	l.cfg.Observer.Sent(ph, req.ID)
	if l.cfg.RequestHeader != nil {
		req.Header = l.cfg.RequestHeader()
	}
	tags := r.GetTags()
	go func() {
		res := l.cfg.Sender.Send(ctx, req)
		l.results <- &Finished{Phase: ph, ID: req.ID, Tags: tags, Scheduled: scheduled, ExplicitSchedule: explicit, Result: res,
			MaxTokens: req.MaxTokens, Completion: req.Completion, Header: req.Header}
	}()
	return nil
}

func (l *loop) text(id string, segs []*workloadv1.Segment) (string, error) {
	if len(segs) == 1 {
		if t, ok := segs[0].GetKind().(*workloadv1.Segment_Text); ok {
			return t.Text, nil
		}
	}
	n := 0
	for _, s := range segs {
		if c, ok := s.GetKind().(*workloadv1.Segment_ContentId); ok {
			n += len(l.content[c.ContentId])
		} else {
			n += len(s.GetText())
		}
	}
	var b strings.Builder
	b.Grow(n)
	for _, s := range segs {
		switch k := s.GetKind().(type) {
		case *workloadv1.Segment_Text:
			b.WriteString(k.Text)
		case *workloadv1.Segment_ContentId:
			c, ok := l.content[k.ContentId]
			if !ok {
				return "", fmt.Errorf("request %q references content %q that the workload never registered", id, k.ContentId)
			}
			b.WriteString(c)
		}
	}
	return b.String(), nil
}
