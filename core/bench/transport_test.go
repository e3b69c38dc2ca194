package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/dispatch"
	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/sdk/host/runloop"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// These tests run the one interpreter (sdk/host/runloop) on the host's real
// clock transport, with fake workloads and senders: what the host adds is
// the goroutine per request, the channel of results, the timer and the
// sends' own context. Where timing matters they wait on signals, not sleeps.

// --- fakes shared by the package's tests ---

// fakeWorkload is a func-field fake of the workload protocol.
type fakeWorkload struct {
	step       func(req protocol.StepRequest) (protocol.StepResponse, error)
	onFinished func(results []protocol.Result) error
}

func (f *fakeWorkload) Describe(context.Context, protocol.HostInfo) (protocol.WorkloadDescription, error) {
	return protocol.WorkloadDescription{}, nil
}

func (f *fakeWorkload) Configure(context.Context, protocol.WorkloadConfig) (protocol.Configured, error) {
	return protocol.Configured{}, nil
}

func (f *fakeWorkload) Step(_ context.Context, r protocol.StepRequest) (protocol.StepResponse, error) {
	return f.step(r)
}

func (f *fakeWorkload) OnFinished(_ context.Context, rs []protocol.Result) error {
	if f.onFinished == nil {
		return nil
	}
	return f.onFinished(rs)
}

// batches is a workload that sends all of warmup, then all of measure, in
// one Step each.
func batches(warmup, measure []protocol.Request) *fakeWorkload {
	return &fakeWorkload{step: func(r protocol.StepRequest) (protocol.StepResponse, error) {
		reqs := measure
		if r.Phase == protocol.Warmup {
			reqs = warmup
		}
		return protocol.StepResponse{Requests: reqs, Next: nextDone}, nil
	}}
}

var (
	nextDone      = protocol.Next{Kind: protocol.NextDone}
	waitForFinish = protocol.Next{Kind: protocol.NextWaitForFinish}
)

func wakeAt(d time.Duration) protocol.Next { return protocol.Next{Kind: protocol.NextWakeAt, At: d} }

func chat(id string, tags map[string]string) protocol.Request {
	return protocol.Request{ID: id, MaxTokens: 8, Tags: tags,
		Messages: []protocol.Message{{Role: "user", Content: []protocol.Segment{{Text: "hi " + id}}}}}
}

func scheduledAt(r protocol.Request, d time.Duration) protocol.Request {
	r.Scheduled, r.HasScheduled = d, true
	return r
}

// answer is what the fake engine does with one request; the zero answer
// is an immediate success.
type answer struct {
	fail         bool
	ttft, decode time.Duration // defaults 100 ms and 1 s, in the timestamps only
	in, out      int           // tokens, defaults 10 and 4
	text         string        // default "answer to <id>"
	wait         time.Duration // real time before answering
	hold         chan struct{} // answer once closed
	beforeAnswer func()        // called before the result is returned
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// fakeSender answers each request by its answer (all, for ids not in
// outcomes). A wait or a hold ends early, as a failure, when the send is
// cancelled. Timestamps are derived from one time.Now() at submit, so
// first-token − submit is exactly the answer's ttft.
type fakeSender struct {
	outcomes map[string]answer
	all      answer
	onSend   func(n int, req engine.Request) // n counts the sends, from 1

	mu         sync.Mutex
	got        []engine.Request
	live, peak int
}

func (s *fakeSender) Send(ctx context.Context, req engine.Request) engine.Result {
	s.mu.Lock()
	o, ok := s.outcomes[req.ID]
	if !ok {
		o = s.all
	}
	s.got = append(s.got, req)
	n := len(s.got)
	s.live++
	s.peak = max(s.peak, s.live)
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.live--; s.mu.Unlock() }()
	if s.onSend != nil {
		s.onSend(n, req)
	}
	res := engine.Result{ID: req.ID, Submit: time.Now()}
	if o.wait > 0 || o.hold != nil {
		var waited <-chan time.Time
		if o.wait > 0 {
			waited = time.After(o.wait)
		}
		select {
		case <-waited:
		case <-o.hold:
		case <-ctx.Done():
			res.Finish = time.Now()
			res.Error = ctx.Err().Error()
			return res
		}
	}
	if o.beforeAnswer != nil {
		o.beforeAnswer()
	}
	if o.fail {
		res.Finish = res.Submit.Add(o.ttft)
		res.Error = "HTTP 500: engine on fire"
		return res
	}
	ttft, decode := orDefault(o.ttft, 100*time.Millisecond), orDefault(o.decode, time.Second)
	res.Success = true
	res.FirstToken = res.Submit.Add(ttft)
	res.LastToken = res.FirstToken.Add(decode)
	res.Finish = res.LastToken
	res.InputTokens, res.OutputTokens = orDefault(o.in, 10), orDefault(o.out, 4)
	res.Chunks = res.OutputTokens
	res.ITL = decode / time.Duration(res.Chunks-1)
	res.Text = orDefault(o.text, "answer to "+req.ID)
	return res
}

// sent returns the requests sent so far.
func (s *fakeSender) sent() []engine.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// --- running the loop on the host's transport ---

// loopRecorder is an Observer that keeps everything.
type loopRecorder struct {
	phases   []string
	starts   map[protocol.Phase]time.Time
	finished []runloop.Finished[dispatch.Measured]
	fail     error
}

func (r *loopRecorder) PhaseStarted(p protocol.Phase, start time.Time) {
	r.phases = append(r.phases, "start "+p.String())
	r.starts[p] = start
}
func (r *loopRecorder) PhaseEnded(p protocol.Phase, _ time.Time) {
	r.phases = append(r.phases, "end "+p.String())
}
func (r *loopRecorder) Sent(*runloop.Outgoing) {}
func (r *loopRecorder) Finished(f *runloop.Finished[dispatch.Measured]) error {
	r.finished = append(r.finished, *f)
	return r.fail
}

func (r *loopRecorder) ids() []string {
	var out []string
	for _, f := range r.finished {
		out = append(out, f.Req.ID)
	}
	return out
}

// loopRun is one run of the loop on newTransport over sender.
type loopRun struct {
	cfg    runloop.Config[dispatch.Measured] // Transport and Observer are set by run
	sender dispatch.Sender
	header func() http.Header
	rec    loopRecorder
	drains []string // OnDrain calls
}

func (lr *loopRun) run(ctx context.Context) (runloop.Result, error) {
	tr := dispatch.New(ctx, lr.sender, lr.header)
	defer tr.Close()
	lr.rec.starts = map[protocol.Phase]time.Time{}
	lr.cfg.Transport, lr.cfg.Observer = tr, &lr.rec
	if lr.cfg.Plugin == "" {
		lr.cfg.Plugin = "fake"
	}
	lr.cfg.OnDrain = func(n int, abandoned bool) {
		lr.drains = append(lr.drains, fmt.Sprintf("%d in flight, abandoned %v", n, abandoned))
	}
	return runloop.Run(ctx, lr.cfg)
}

func resultIDs(rs []protocol.Result) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

// within fails the test if ch is not closed within d (a generous bound: it
// only catches a hang).
func within(t *testing.T, ch <-chan struct{}, d time.Duration, what string) bool {
	t.Helper()
	select {
	case <-ch:
		return true
	case <-time.After(d):
		t.Errorf("%s: still waiting after %v", what, d)
		return false
	}
}

// --- the loop on the real clock ---

func TestLoopPhasesAndContentResolution(t *testing.T) {
	t.Parallel()
	var delivered []string
	wl := &fakeWorkload{
		step: func(r protocol.StepRequest) (protocol.StepResponse, error) {
			if r.Phase == protocol.Warmup {
				return protocol.StepResponse{Next: nextDone}, nil
			}
			if r.InFlight > 0 {
				t.Errorf("measure step called with %d in flight", r.InFlight)
			}
			req := chat("a", nil)
			req.Messages[0].Content = []protocol.Segment{{Ref: "doc"}, {Text: " Q?"}}
			return protocol.StepResponse{
				Contents: []protocol.Content{{ID: "doc", Text: "long document"}},
				Requests: []protocol.Request{req},
				Next:     nextDone,
			}, nil
		},
		onFinished: func(rs []protocol.Result) error {
			for _, r := range rs {
				delivered = append(delivered, r.ID+":"+r.Text)
			}
			return nil
		},
	}
	snd := &fakeSender{}
	lr := &loopRun{sender: snd, cfg: runloop.Config[dispatch.Measured]{Workload: wl, WantsText: true}}
	res, err := lr.run(context.Background())
	if err != nil || res.Interrupted {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if got := snd.sent(); len(got) != 1 || got[0].Messages[0].Content != "long document Q?" {
		t.Errorf("sent %+v, want one request with the content resolved", got)
	}
	if want := "start warmup,end warmup,start measure,end measure"; strings.Join(lr.rec.phases, ",") != want {
		t.Errorf("phases = %v, want %s", lr.rec.phases, want)
	}
	if d := cmp.Diff([]string{"a:answer to a"}, delivered); d != "" {
		t.Errorf("delivered (-want +got):\n%s", d)
	}
	if len(lr.rec.finished) != 1 || lr.rec.finished[0].Seq != 1 || lr.rec.finished[0].Req.Phase != protocol.Measure {
		t.Errorf("finished = %+v", lr.rec.finished)
	}
	if !res.MeasureStart.Equal(lr.rec.starts[protocol.Measure]) || res.MeasureEnd.Before(res.MeasureStart) {
		t.Errorf("measure bounds %v .. %v, phase started %v", res.MeasureStart, res.MeasureEnd, lr.rec.starts[protocol.Measure])
	}
}

// Send hands a request to its own goroutine: the loop never waits for the
// engine. Three requests of one Step are held until all three reached the
// sender, which a sending loop would never get to.
func TestLoopSendsWithoutWaiting(t *testing.T) {
	t.Parallel()
	all := make(chan struct{})
	// Should sends be serialised, the first would wait out its 30 s and the
	// peak would be 1.
	snd := &fakeSender{all: answer{hold: all, wait: 30 * time.Second}, onSend: func(n int, _ engine.Request) {
		if n == 3 {
			close(all)
		}
	}}
	wl := batches(nil, []protocol.Request{chat("a", nil), chat("b", nil), chat("c", nil)})
	lr := &loopRun{sender: snd, cfg: runloop.Config[dispatch.Measured]{Workload: wl}}
	res, err := lr.run(context.Background())
	if err != nil || res.Interrupted {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if snd.peak != 3 {
		t.Errorf("peak concurrency %d, want the 3 requests of the Step at once", snd.peak)
	}
	for _, f := range lr.rec.finished {
		if !f.Outcome.Success {
			t.Errorf("%s failed: %s", f.Req.ID, f.Outcome.Error)
		}
	}
}

// A semaphore-style workload (as long-doc-qa): never more than 2 in flight,
// stepped again on each finish.
func TestLoopWaitForFinishBoundsConcurrency(t *testing.T) {
	t.Parallel()
	next := 0
	const total, limit = 12, 2
	wl := &fakeWorkload{step: func(r protocol.StepRequest) (protocol.StepResponse, error) {
		if r.Phase == protocol.Warmup {
			return protocol.StepResponse{Next: nextDone}, nil
		}
		resp := protocol.StepResponse{Next: waitForFinish}
		for n := r.InFlight; n < limit && next < total; n++ {
			resp.Requests = append(resp.Requests, chat(fmt.Sprint("r", next), nil))
			next++
		}
		if next == total {
			resp.Next = nextDone
		}
		return resp, nil
	}}
	snd := &fakeSender{all: answer{wait: 2 * time.Millisecond}}
	lr := &loopRun{sender: snd, cfg: runloop.Config[dispatch.Measured]{Workload: wl}}
	if _, err := lr.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(lr.rec.finished) != total || snd.peak > limit || snd.peak < 1 {
		t.Fatalf("finished %d (want %d), peak concurrency %d (limit %d)", len(lr.rec.finished), total, snd.peak, limit)
	}
}

// WakeAt schedules Steps on the phase's timeline: a Step never runs before
// the time it asked for. A request's due time is its explicit schedule, or
// when its Step was due; it is never after the submit.
func TestLoopWakeAtScheduleAndDueTimes(t *testing.T) {
	t.Parallel()
	const interval = 20 * time.Millisecond
	k := 0
	var late []string
	wl := &fakeWorkload{step: func(r protocol.StepRequest) (protocol.StepResponse, error) {
		if r.Phase == protocol.Warmup || k == 5 {
			return protocol.StepResponse{Next: nextDone}, nil
		}
		if asked := time.Duration(k) * interval; r.Offset < asked {
			late = append(late, fmt.Sprintf("step %d at %v, before the %v it asked for", k, r.Offset, asked))
		}
		reqs := []protocol.Request{
			scheduledAt(chat(fmt.Sprint("k", k), nil), time.Duration(k)*interval),
			chat(fmt.Sprint("i", k), nil),
		}
		k++
		return protocol.StepResponse{Requests: reqs, Next: wakeAt(time.Duration(k) * interval)}, nil
	}}
	lr := &loopRun{sender: &fakeSender{}, cfg: runloop.Config[dispatch.Measured]{Workload: wl}}
	if _, err := lr.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, l := range late {
		t.Error(l)
	}
	start := lr.rec.starts[protocol.Measure]
	if len(lr.rec.finished) != 10 {
		t.Fatalf("%d finished, want 10", len(lr.rec.finished))
	}
	for _, f := range lr.rec.finished {
		var i int
		kind := f.Req.ID[0]
		fmt.Sscanf(f.Req.ID[1:], "%d", &i)
		asked := start.Add(time.Duration(i) * interval)
		switch {
		case kind == 'k' && (!f.Req.Due.Equal(asked) || !f.Req.Explicit):
			t.Errorf("%s due at %v (explicit %v), want %v, explicit", f.Req.ID, f.Req.Due.Sub(start), f.Req.Explicit, asked.Sub(start))
		case kind == 'i' && (f.Req.Due.Before(asked) || f.Req.Explicit):
			t.Errorf("%s due at %v (explicit %v), want at or after its Step's %v, implicit", f.Req.ID, f.Req.Due.Sub(start), f.Req.Explicit, asked.Sub(start))
		}
		if lag := f.Measured.Result.Submit.Sub(f.Req.Due); lag < 0 {
			t.Errorf("%s submitted %v before it was due", f.Req.ID, -lag)
		}
	}
}

// A workload that dies mid-run: the loop stops stepping, still records
// every request already sent, and returns the error.
func TestLoopWorkloadErrorDrainsInFlight(t *testing.T) {
	t.Parallel()
	crashed := make(chan struct{}) // the requests answer only after the crash
	calls := 0
	wl := &fakeWorkload{step: func(r protocol.StepRequest) (protocol.StepResponse, error) {
		if r.Phase == protocol.Warmup {
			return protocol.StepResponse{Next: nextDone}, nil
		}
		calls++
		if calls == 2 {
			close(crashed)
			return protocol.StepResponse{}, errors.New("plugin crashed")
		}
		return protocol.StepResponse{Requests: []protocol.Request{chat("a", nil), chat("b", nil)}, Next: wakeAt(0)}, nil
	}}
	lr := &loopRun{sender: &fakeSender{all: answer{hold: crashed}}, cfg: runloop.Config[dispatch.Measured]{Workload: wl}}
	_, err := lr.run(context.Background())
	if err == nil || err.Error() != "measure phase: step: plugin crashed" {
		t.Fatalf("err = %v", err)
	}
	if calls != 2 {
		t.Errorf("stepped %d times, want 2 (none after the error)", calls)
	}
	if ids := lr.rec.ids(); len(ids) != 2 {
		t.Fatalf("recorded %v of the 2 requests in flight at the crash", ids)
	}
	for _, f := range lr.rec.finished {
		if !f.Outcome.Success {
			t.Errorf("%s failed (%s): the drain should have let it finish", f.Req.ID, f.Outcome.Error)
		}
	}
}

// Ctrl-C: no new requests, in-flight ones finish (within the drain timeout)
// and are recorded; the result says interrupted.
func TestLoopInterruptDrains(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wl := &fakeWorkload{step: func(r protocol.StepRequest) (protocol.StepResponse, error) {
		if r.Phase == protocol.Warmup {
			return protocol.StepResponse{Next: nextDone}, nil
		}
		return protocol.StepResponse{Requests: []protocol.Request{chat(fmt.Sprint("r", int64(r.Offset)), nil)},
			Next: wakeAt(r.Offset + 10*time.Millisecond)}, nil
	}}
	// Interrupt as the third request goes out (not on a timer: a loaded
	// machine may have sent fewer by then), with all three in flight.
	snd := &fakeSender{all: answer{wait: 30 * time.Millisecond}, onSend: func(n int, _ engine.Request) {
		if n == 3 {
			cancel()
		}
	}}
	lr := &loopRun{sender: snd, cfg: runloop.Config[dispatch.Measured]{Workload: wl}}
	res, err := lr.run(ctx)
	if err != nil || !res.Interrupted {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	sent := len(snd.sent())
	if len(lr.rec.finished) != sent || sent < 3 {
		t.Fatalf("sent %d, recorded %d", sent, len(lr.rec.finished))
	}
	for _, f := range lr.rec.finished {
		if !f.Outcome.Success {
			t.Errorf("%s failed (%s): the drain should have let it finish", f.Req.ID, f.Outcome.Error)
		}
	}
	if len(lr.drains) != 1 || !strings.HasSuffix(lr.drains[0], "abandoned false") {
		t.Errorf("OnDrain calls %v, want one, not abandoning", lr.drains)
	}
}

// After the drain timeout, stragglers are cancelled and recorded as failed.
func TestLoopDrainTimeoutCancels(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wl := &fakeWorkload{step: func(r protocol.StepRequest) (protocol.StepResponse, error) {
		if r.Phase == protocol.Warmup {
			return protocol.StepResponse{Next: nextDone}, nil
		}
		return protocol.StepResponse{Requests: []protocol.Request{chat("slow", nil)}, Next: waitForFinish}, nil
	}}
	var cancelled atomic.Int64 // unix ns of the Ctrl-C
	// Only the drain timeout's cancellation answers (30 s: against a hang).
	snd := &fakeSender{all: answer{hold: make(chan struct{}), wait: 30 * time.Second}, onSend: func(int, engine.Request) {
		cancelled.Store(time.Now().UnixNano())
		cancel()
	}}
	const drain = 50 * time.Millisecond
	lr := &loopRun{sender: snd, cfg: runloop.Config[dispatch.Measured]{Workload: wl, DrainTimeout: drain}}
	res, err := lr.run(ctx)
	if err != nil || !res.Interrupted || len(lr.rec.finished) != 1 || lr.rec.finished[0].Outcome.Success {
		t.Fatalf("res %+v err %v finished %+v", res, err, lr.rec.finished)
	}
	if got := lr.rec.finished[0].Outcome.Error; got != context.Canceled.Error() {
		t.Errorf("error %q, want the cancellation's", got)
	}
	if waited := time.Since(time.Unix(0, cancelled.Load())); waited < drain {
		t.Errorf("the run ended %v after Ctrl-C, before the %v drain timeout", waited, drain)
	}
	want := []string{"1 in flight, abandoned false", "1 in flight, abandoned true"}
	if d := cmp.Diff(want, lr.drains); d != "" {
		t.Errorf("OnDrain calls (-want +got):\n%s", d)
	}
}

// Ctrl-C after the workload has sent everything and said it is done (the
// tail of every run): the drain timeout still bounds the wait, and the
// cancelled requests are recorded as failed without telling the workload.
func TestLoopDrainTimeoutAfterDone(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wl := &fakeWorkload{
		step: func(r protocol.StepRequest) (protocol.StepResponse, error) {
			if r.Phase == protocol.Warmup {
				return protocol.StepResponse{Next: nextDone}, nil
			}
			return protocol.StepResponse{Requests: []protocol.Request{chat("slow0", nil), chat("slow1", nil)}, Next: nextDone}, nil
		},
		onFinished: func([]protocol.Result) error {
			// As a plugin that got the terminal's Ctrl-C too: it is not told
			// of results after the interrupt, so this error never surfaces.
			return errors.New("workload plugin: OnFinished failed: context canceled")
		},
	}
	snd := &fakeSender{all: answer{hold: make(chan struct{}), wait: 30 * time.Second}, onSend: func(n int, _ engine.Request) {
		if n == 2 {
			cancel()
		}
	}}
	lr := &loopRun{sender: snd, cfg: runloop.Config[dispatch.Measured]{Workload: wl, DrainTimeout: 50 * time.Millisecond}}
	type ran struct {
		res runloop.Result
		err error
	}
	ch := make(chan ran, 1)
	go func() {
		res, err := lr.run(ctx)
		ch <- ran{res, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil || !r.res.Interrupted || len(lr.rec.finished) != 2 {
			t.Fatalf("res %+v err %v finished %d", r.res, r.err, len(lr.rec.finished))
		}
		for _, f := range lr.rec.finished {
			if f.Outcome.Success || f.Outcome.Error == "" {
				t.Errorf("%s: want recorded as failed with its error, got %+v", f.Req.ID, f.Outcome)
			}
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run still waiting for in-flight requests 30 s after Ctrl-C with a 50 ms drain timeout")
	}
}

func TestLoopStallIsAnError(t *testing.T) {
	t.Parallel()
	wl := &fakeWorkload{step: func(protocol.StepRequest) (protocol.StepResponse, error) {
		return protocol.StepResponse{Next: waitForFinish}, nil
	}}
	lr := &loopRun{sender: &fakeSender{}, cfg: runloop.Config[dispatch.Measured]{Workload: wl}}
	_, err := lr.run(context.Background())
	if !errors.Is(err, runloop.ErrStalled) || !strings.Contains(err.Error(), "workload fake") {
		t.Fatalf("err = %v, want ErrStalled naming the workload", err)
	}
}

func TestLoopUnregisteredContentIsAnError(t *testing.T) {
	t.Parallel()
	wl := &fakeWorkload{step: func(protocol.StepRequest) (protocol.StepResponse, error) {
		req := chat("a", nil)
		req.Messages[0].Content = []protocol.Segment{{Ref: "nope"}}
		return protocol.StepResponse{Requests: []protocol.Request{req}, Next: nextDone}, nil
	}}
	snd := &fakeSender{}
	lr := &loopRun{sender: snd, cfg: runloop.Config[dispatch.Measured]{Workload: wl}}
	_, err := lr.run(context.Background())
	if err == nil || !strings.Contains(err.Error(), `content "nope"`) || !strings.Contains(err.Error(), `request "a"`) {
		t.Fatalf("err = %v", err)
	}
	if got := snd.sent(); len(got) != 0 {
		t.Errorf("sent %d requests, want none", len(got))
	}
}

// Deliveries of results are split so none exceeds the byte cap.
func TestLoopResultBatchesAreCappedByBytes(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 3<<20)
	var sizes []int
	count := 0
	var reqs []protocol.Request
	for i := range 5 {
		reqs = append(reqs, chat(fmt.Sprint(i), nil))
	}
	wl := batches(nil, reqs)
	wl.onFinished = func(rs []protocol.Result) error {
		n := 0
		for _, r := range rs {
			n += len(r.Text)
		}
		sizes = append(sizes, n)
		count += len(rs)
		return nil
	}
	lr := &loopRun{sender: &fakeSender{all: answer{text: big}}, cfg: runloop.Config[dispatch.Measured]{Workload: wl, WantsText: true}}
	if _, err := lr.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, s := range sizes {
		if s > runloop.DefaultBatchBytes {
			t.Errorf("a delivery carried %d bytes of text", s)
		}
		total += s
	}
	if total != 5*len(big) || count != 5 || len(sizes) < 2 {
		t.Fatalf("deliveries %v of %d results", sizes, count)
	}
}

// An observer error while the last requests finish (the journal cannot be
// written) is returned, not dropped because the workload was already done.
func TestLoopObserverErrorAfterDone(t *testing.T) {
	t.Parallel()
	wl := batches(nil, []protocol.Request{chat("a", nil)})
	lr := &loopRun{sender: &fakeSender{all: answer{wait: time.Millisecond}}, cfg: runloop.Config[dispatch.Measured]{Workload: wl}}
	lr.rec.fail = errors.New("journal: no space left on device")
	_, err := lr.run(context.Background())
	if !errors.Is(err, lr.rec.fail) {
		t.Fatalf("err = %v, want the observer's error", err)
	}
}

// The transport's header func runs once per request; its headers go out
// with the request and come back, with what was sent, in Finished.
// Without it no header is added.
func TestLoopRequestHeaderReachesSenderAndFinished(t *testing.T) {
	t.Parallel()
	for _, withHook := range []bool{false, true} {
		t.Run(fmt.Sprint("hook=", withHook), func(t *testing.T) {
			t.Parallel()
			compl := protocol.Request{ID: "c", MaxTokens: 7, Completion: true, Prompt: []protocol.Segment{{Text: "p"}}}
			wl := batches([]protocol.Request{chat("w", nil)}, []protocol.Request{chat("a", nil), compl})
			snd := &fakeSender{}
			lr := &loopRun{sender: snd, cfg: runloop.Config[dispatch.Measured]{Workload: wl}}
			calls := 0
			if withHook {
				lr.header = func() http.Header {
					calls++
					return http.Header{"Traceparent": {fmt.Sprintf("tp-%d", calls)}}
				}
			}
			if _, err := lr.run(context.Background()); err != nil {
				t.Fatal(err)
			}
			sent := map[string]string{}
			for _, r := range snd.sent() {
				sent[r.ID] = r.Header.Get("Traceparent")
				if !withHook && r.Header != nil {
					t.Errorf("%s sent with headers %v although no hook is set", r.ID, r.Header)
				}
			}
			if len(lr.rec.finished) != 3 {
				t.Fatalf("%d finished, want 3", len(lr.rec.finished))
			}
			seen := map[string]bool{}
			for _, f := range lr.rec.finished {
				got := f.Measured.Header.Get("Traceparent")
				if got != sent[f.Req.ID] {
					t.Errorf("%s: Finished header traceparent %q, sent %q", f.Req.ID, got, sent[f.Req.ID])
				}
				if !withHook && f.Measured.Header != nil {
					t.Errorf("%s: Finished header %v without a hook", f.Req.ID, f.Measured.Header)
				}
				if withHook && (got == "" || seen[got]) {
					t.Errorf("%s: traceparent %q missing or reused", f.Req.ID, got)
				}
				seen[got] = true
				wantMax, wantCompl := 8, false
				if f.Req.ID == "c" {
					wantMax, wantCompl = 7, true
				}
				if f.Req.MaxTokens != wantMax || f.Req.Completion != wantCompl {
					t.Errorf("%s: Finished MaxTokens=%d Completion=%v, want %d %v", f.Req.ID, f.Req.MaxTokens, f.Req.Completion, wantMax, wantCompl)
				}
			}
			if withHook && calls != 3 {
				t.Errorf("hook called %d times, want once per request (3)", calls)
			}
		})
	}
}

// With FinishedInStep the results travel in the next Step, and OnFinished
// only carries what finished after the phase's last Step; without it,
// OnFinished carries them right before each Step. Either way the workload
// hears the same results in the same order. The engine answers one request
// at a time, each once the workload heard of the one before, so the
// grouping does not depend on timing.
func TestLoopFinishedInStep(t *testing.T) {
	t.Parallel()
	tests := []struct {
		caps protocol.Capabilities
		want []string
	}{
		{protocol.Capabilities{protocol.FinishedInStep}, []string{
			"warmup step []",
			"measure step []", "measure step [c]", "measure step [a]", "measure step [b]", "measure told [d]",
		}},
		{nil, []string{
			"warmup step []",
			"measure step []", "measure told [c]", "measure step []", "measure told [a]", "measure step []",
			"measure told [b]", "measure step []", "measure told [d]",
		}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint("capabilities=", tc.caps), func(t *testing.T) {
			t.Parallel()
			order := []string{"c", "a", "b", "d"}
			holds := map[string]chan struct{}{}
			outcomes := map[string]answer{}
			for _, id := range order {
				holds[id] = make(chan struct{})
				outcomes[id] = answer{hold: holds[id]}
			}
			heard := make(chan string, 16)
			var log, got []string
			hear := func(rs []protocol.Result) {
				for _, r := range rs {
					got = append(got, r.ID)
					heard <- r.ID
				}
			}
			measureSteps := 0
			wl := &fakeWorkload{
				step: func(r protocol.StepRequest) (protocol.StepResponse, error) {
					log = append(log, fmt.Sprintf("%v step %v", r.Phase, resultIDs(r.Finished)))
					hear(r.Finished)
					if r.Phase == protocol.Warmup {
						return protocol.StepResponse{Next: nextDone}, nil
					}
					measureSteps++
					switch {
					case measureSteps == 1:
						return protocol.StepResponse{Requests: []protocol.Request{chat("a", nil), chat("b", nil), chat("c", nil)}, Next: waitForFinish}, nil
					case len(got) == 3:
						return protocol.StepResponse{Requests: []protocol.Request{chat("d", nil)}, Next: nextDone}, nil
					}
					return protocol.StepResponse{Next: waitForFinish}, nil
				},
				onFinished: func(rs []protocol.Result) error {
					log = append(log, fmt.Sprintf("%v told %v", rs[0].Phase, resultIDs(rs)))
					hear(rs)
					return nil
				},
			}
			engineDone := make(chan struct{})
			go func() {
				defer close(engineDone)
				for i, id := range order {
					close(holds[id])
					select {
					case h := <-heard:
						if h != id {
							t.Errorf("heard %s, want %s", h, id)
						}
					case <-time.After(30 * time.Second):
						t.Errorf("the workload never heard of %s", id)
						for _, rest := range order[i+1:] {
							close(holds[rest])
						}
						return
					}
				}
			}()
			lr := &loopRun{sender: &fakeSender{outcomes: outcomes}, cfg: runloop.Config[dispatch.Measured]{Workload: wl, Capabilities: tc.caps}}
			_, err := lr.run(context.Background())
			within(t, engineDone, 30*time.Second, "the fake engine")
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, log); d != "" {
				t.Errorf("calls to the workload (-want +got):\n%s", d)
			}
			if d := cmp.Diff(order, got); d != "" {
				t.Errorf("results heard (-want +got):\n%s", d)
			}
			if d := cmp.Diff(order, lr.rec.ids()); d != "" {
				t.Errorf("results recorded (-want +got):\n%s", d)
			}
		})
	}
}

// Requests handed over ahead go out when due even while the workload's
// next Step is in flight: the second Step blocks until the engine has
// both (it would wait forever if sending waited for it), and neither goes
// before it is due.
func TestHandedOverAheadSentDuringAStep(t *testing.T) {
	t.Parallel()
	got := make(chan string, 4)
	snd := &fakeSender{onSend: func(_ int, req engine.Request) { got <- req.ID }}
	steps := 0
	wl := &fakeWorkload{step: func(r protocol.StepRequest) (protocol.StepResponse, error) {
		if r.Phase == protocol.Warmup {
			return protocol.StepResponse{Next: nextDone}, nil
		}
		steps++
		switch steps {
		case 1:
			return protocol.StepResponse{Next: wakeAt(0), Requests: []protocol.Request{
				scheduledAt(chat("a", nil), 20*time.Millisecond), scheduledAt(chat("b", nil), 40*time.Millisecond)}}, nil
		case 2:
			for _, want := range []string{"a", "b"} {
				select {
				case id := <-got:
					if id != want {
						t.Errorf("sent %s, want %s", id, want)
					}
				case <-time.After(30 * time.Second):
					t.Fatalf("%s was not sent while the Step was in flight", want)
				}
			}
		}
		return protocol.StepResponse{Next: nextDone}, nil
	}}
	lr := &loopRun{sender: snd, cfg: runloop.Config[dispatch.Measured]{Workload: wl}}
	if _, err := lr.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ids := lr.rec.ids(); len(ids) != 2 {
		t.Fatalf("finished %v, want a and b", ids)
	}
	for _, f := range lr.rec.finished {
		if lag := f.Measured.Result.Submit.Sub(f.Req.Due); lag < 0 {
			t.Errorf("%s sent %v before it was due", f.Req.ID, -lag)
		}
	}
}
