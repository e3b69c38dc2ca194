package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/engine"
	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
)

// fakeWorkload is a func-field fake of the workload protocol.
type fakeWorkload struct {
	step       func(req *workloadv1.StepRequest) (*workloadv1.StepResponse, error)
	onFinished func(req *workloadv1.OnFinishedRequest) error
}

func (f *fakeWorkload) Step(_ context.Context, r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
	return f.step(r)
}

func (f *fakeWorkload) OnFinished(_ context.Context, r *workloadv1.OnFinishedRequest) (*workloadv1.OnFinishedResponse, error) {
	if f.onFinished == nil {
		return &workloadv1.OnFinishedResponse{}, nil
	}
	return &workloadv1.OnFinishedResponse{}, f.onFinished(r)
}

// fakeSender answers after delay(req) with success, recording what it got.
type fakeSender struct {
	mu    sync.Mutex
	delay func(engine.Request) time.Duration
	got   []engine.Request
	live  int
	peak  int
}

func (s *fakeSender) Send(ctx context.Context, req engine.Request) engine.Result {
	s.mu.Lock()
	s.got = append(s.got, req)
	s.live++
	s.peak = max(s.peak, s.live)
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.live--; s.mu.Unlock() }()
	res := engine.Result{ID: req.ID, Submit: time.Now()}
	d := time.Duration(0)
	if s.delay != nil {
		d = s.delay(req)
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
		res.Finish = time.Now()
		res.Error = ctx.Err().Error()
		return res
	}
	res.FirstToken = time.Now()
	res.Finish = res.FirstToken
	res.Success, res.Text, res.OutputTokens, res.Chunks = true, "ok "+req.ID, 1, 1
	return res
}

// recorder is an Observer that keeps everything.
type recorder struct {
	mu       sync.Mutex
	phases   []string
	sent     []string
	finished []*Finished
	fail     error
}

func (r *recorder) PhaseStarted(p workloadv1.Phase, _ time.Time) {
	r.phases = append(r.phases, "start "+phaseName(p))
}
func (r *recorder) PhaseEnded(p workloadv1.Phase, _ time.Time) {
	r.phases = append(r.phases, "end "+phaseName(p))
}
func (r *recorder) Sent(_ workloadv1.Phase, id string) { r.sent = append(r.sent, id) }
func (r *recorder) Finished(f *Finished) error {
	r.finished = append(r.finished, f)
	return r.fail
}

func chat(id, text string) *workloadv1.Request {
	return &workloadv1.Request{Id: id, MaxTokens: 1, Body: &workloadv1.Request_Chat{Chat: &workloadv1.Chat{
		Messages: []*workloadv1.Message{{Role: "user", Content: []*workloadv1.Segment{{Kind: &workloadv1.Segment_Text{Text: text}}}}},
	}}}
}

func done() *workloadv1.StepResponse_Done { return &workloadv1.StepResponse_Done{Done: true} }

func TestPhasesAndContentResolution(t *testing.T) {
	t.Parallel()
	var delivered []string
	wl := &fakeWorkload{
		step: func(r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
			if r.Phase == workloadv1.Phase_PHASE_WARMUP {
				return &workloadv1.StepResponse{Next: done()}, nil
			}
			if r.InFlight > 0 {
				t.Errorf("measure step called with %d in flight after Done", r.InFlight)
			}
			req := chat("a", "")
			req.GetChat().Messages[0].Content = []*workloadv1.Segment{
				{Kind: &workloadv1.Segment_ContentId{ContentId: "doc"}},
				{Kind: &workloadv1.Segment_Text{Text: " Q?"}},
			}
			return &workloadv1.StepResponse{
				Contents: []*workloadv1.Content{{Id: "doc", Text: "long document"}},
				Requests: []*workloadv1.Request{req},
				Next:     done(),
			}, nil
		},
		onFinished: func(r *workloadv1.OnFinishedRequest) error {
			for _, res := range r.Results {
				delivered = append(delivered, res.Id+":"+res.Text)
			}
			return nil
		},
	}
	snd := &fakeSender{}
	rec := &recorder{}
	out, err := Run(context.Background(), Config{Workload: wl, Sender: snd, Observer: rec, Log: zerolog.Nop(), WantsText: true})
	if err != nil || out.Interrupted {
		t.Fatalf("Run = %+v, %v", out, err)
	}
	if got := snd.got[0].Messages[0].Content; got != "long document Q?" {
		t.Errorf("resolved content = %q", got)
	}
	if want := "start warmup,end warmup,start measure,end measure"; strings.Join(rec.phases, ",") != want {
		t.Errorf("phases = %v, want %s", rec.phases, want)
	}
	if len(delivered) != 1 || delivered[0] != "a:ok a" {
		t.Errorf("delivered = %v", delivered)
	}
	if rec.finished[0].Seq != 1 || rec.finished[0].Phase != workloadv1.Phase_PHASE_MEASURE {
		t.Errorf("finished = %+v", rec.finished[0])
	}
}

// A semaphore-style workload (as long-doc-qa): never more than 2 in flight,
// stepped again on each finish.
func TestWaitForFinishBoundsConcurrency(t *testing.T) {
	t.Parallel()
	next := 0
	const total, limit = 12, 2
	wl := &fakeWorkload{step: func(r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
		if r.Phase == workloadv1.Phase_PHASE_WARMUP {
			return &workloadv1.StepResponse{Next: done()}, nil
		}
		resp := &workloadv1.StepResponse{}
		for n := int(r.InFlight); n < limit && next < total; n++ {
			resp.Requests = append(resp.Requests, chat(fmt.Sprint("r", next), "x"))
			next++
		}
		if next == total {
			resp.Next = done()
		} else {
			resp.Next = &workloadv1.StepResponse_WaitForFinish{WaitForFinish: true}
		}
		return resp, nil
	}}
	snd := &fakeSender{delay: func(engine.Request) time.Duration { return 5 * time.Millisecond }}
	rec := &recorder{}
	if _, err := Run(context.Background(), Config{Workload: wl, Sender: snd, Observer: rec, Log: zerolog.Nop()}); err != nil {
		t.Fatal(err)
	}
	if len(rec.finished) != total || snd.peak > limit || snd.peak < 1 {
		t.Fatalf("finished %d (want %d), peak concurrency %d (limit %d)", len(rec.finished), total, snd.peak, limit)
	}
}

// WakeAt schedules requests on an absolute timeline; the scheduled time of
// each request is its due time, so dispatch lag is small.
func TestWakeAtScheduleAndScheduledTime(t *testing.T) {
	t.Parallel()
	k := 0
	const interval = 20 * time.Millisecond
	wl := &fakeWorkload{step: func(r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
		if r.Phase == workloadv1.Phase_PHASE_WARMUP || k == 5 {
			return &workloadv1.StepResponse{Next: done()}, nil
		}
		req := chat(fmt.Sprint("k", k), "x")
		ns := int64(time.Duration(k) * interval)
		req.ScheduledNs = &ns
		k++
		return &workloadv1.StepResponse{Requests: []*workloadv1.Request{req},
			Next: &workloadv1.StepResponse_WakeAtNs{WakeAtNs: int64(time.Duration(k) * interval)}}, nil
	}}
	rec := &recorder{}
	var start time.Time
	obs := &startRecorder{recorder: rec, start: &start}
	if _, err := Run(context.Background(), Config{Workload: wl, Sender: &fakeSender{}, Observer: obs, Log: zerolog.Nop()}); err != nil {
		t.Fatal(err)
	}
	for _, f := range rec.finished {
		var i int
		fmt.Sscanf(f.ID, "k%d", &i)
		if want := start.Add(time.Duration(i) * interval); !f.Scheduled.Equal(want) {
			t.Errorf("%s scheduled at %v, want %v", f.ID, f.Scheduled.Sub(start), want.Sub(start))
		}
		if lag := f.Result.Submit.Sub(f.Scheduled); lag < 0 {
			t.Errorf("%s submitted %v before it was due", f.ID, -lag)
		}
	}
}

type startRecorder struct {
	*recorder
	start *time.Time
}

func (s *startRecorder) PhaseStarted(p workloadv1.Phase, t time.Time) {
	if p == workloadv1.Phase_PHASE_MEASURE {
		*s.start = t
	}
	s.recorder.PhaseStarted(p, t)
}

// A workload that dies mid-run: the loop stops stepping, still records
// every request already sent, and returns the error.
func TestWorkloadErrorDrainsInFlight(t *testing.T) {
	t.Parallel()
	calls := 0
	wl := &fakeWorkload{step: func(r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
		if r.Phase == workloadv1.Phase_PHASE_WARMUP {
			return &workloadv1.StepResponse{Next: done()}, nil
		}
		calls++
		if calls == 2 {
			return nil, errors.New("plugin crashed")
		}
		return &workloadv1.StepResponse{Requests: []*workloadv1.Request{chat("a", "x"), chat("b", "x")},
			Next: &workloadv1.StepResponse_WakeAtNs{WakeAtNs: 0}}, nil
	}}
	snd := &fakeSender{delay: func(engine.Request) time.Duration { return 20 * time.Millisecond }}
	rec := &recorder{}
	_, err := Run(context.Background(), Config{Workload: wl, Sender: snd, Observer: rec, Log: zerolog.Nop()})
	if err == nil || !strings.Contains(err.Error(), "plugin crashed") {
		t.Fatalf("err = %v", err)
	}
	if len(rec.finished) != 2 {
		t.Fatalf("recorded %d of the 2 requests sent before the crash", len(rec.finished))
	}
}

// Ctrl-C: no new requests, in-flight ones finish (within the drain timeout)
// and are recorded; the outcome says interrupted.
func TestInterruptDrains(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	wl := &fakeWorkload{step: func(r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
		if r.Phase == workloadv1.Phase_PHASE_WARMUP {
			return &workloadv1.StepResponse{Next: done()}, nil
		}
		id := fmt.Sprint("r", r.OffsetNs)
		return &workloadv1.StepResponse{Requests: []*workloadv1.Request{chat(id, "x")},
			Next: &workloadv1.StepResponse_WakeAtNs{WakeAtNs: r.OffsetNs + int64(10*time.Millisecond)}}, nil
	}}
	// Interrupt as the third request goes out (not on a timer: a loaded
	// machine may have sent fewer by then), with all three in flight.
	var sends atomic.Int32
	snd := &fakeSender{delay: func(engine.Request) time.Duration {
		if sends.Add(1) == 3 {
			cancel()
		}
		return 30 * time.Millisecond
	}}
	rec := &recorder{}
	out, err := Run(ctx, Config{Workload: wl, Sender: snd, Observer: rec, Log: zerolog.Nop()})
	if err != nil || !out.Interrupted {
		t.Fatalf("Run = %+v, %v", out, err)
	}
	snd.mu.Lock()
	sent := len(snd.got)
	snd.mu.Unlock()
	if len(rec.finished) != sent || sent < 3 {
		t.Fatalf("sent %d, recorded %d", sent, len(rec.finished))
	}
	for _, f := range rec.finished {
		if !f.Result.Success {
			t.Errorf("%s failed (%s): the drain should have let it finish", f.ID, f.Result.Error)
		}
	}
}

// After the drain timeout, stragglers are cancelled and recorded as failed.
func TestDrainTimeoutCancels(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	wl := &fakeWorkload{step: func(r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
		if r.Phase == workloadv1.Phase_PHASE_WARMUP {
			return &workloadv1.StepResponse{Next: done()}, nil
		}
		return &workloadv1.StepResponse{Requests: []*workloadv1.Request{chat("slow", "x")},
			Next: &workloadv1.StepResponse_WaitForFinish{WaitForFinish: true}}, nil
	}}
	snd := &fakeSender{delay: func(engine.Request) time.Duration { return time.Hour }}
	rec := &recorder{}
	time.AfterFunc(20*time.Millisecond, cancel)
	out, err := Run(ctx, Config{Workload: wl, Sender: snd, Observer: rec, Log: zerolog.Nop(), DrainTimeout: 50 * time.Millisecond})
	if err != nil || !out.Interrupted || len(rec.finished) != 1 || rec.finished[0].Result.Success {
		t.Fatalf("out %+v err %v finished %+v", out, err, rec.finished)
	}
}

func TestStallIsAnError(t *testing.T) {
	t.Parallel()
	wl := &fakeWorkload{step: func(r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
		return &workloadv1.StepResponse{Next: &workloadv1.StepResponse_WaitForFinish{WaitForFinish: true}}, nil
	}}
	_, err := Run(context.Background(), Config{Workload: wl, Sender: &fakeSender{}, Observer: &recorder{}, Log: zerolog.Nop()})
	if !errors.Is(err, ErrStalled) {
		t.Fatalf("err = %v, want ErrStalled", err)
	}
}

func TestUnregisteredContentIsAnError(t *testing.T) {
	t.Parallel()
	wl := &fakeWorkload{step: func(r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
		req := chat("a", "")
		req.GetChat().Messages[0].Content = []*workloadv1.Segment{{Kind: &workloadv1.Segment_ContentId{ContentId: "nope"}}}
		return &workloadv1.StepResponse{Requests: []*workloadv1.Request{req}, Next: done()}, nil
	}}
	_, err := Run(context.Background(), Config{Workload: wl, Sender: &fakeSender{}, Observer: &recorder{}, Log: zerolog.Nop()})
	if err == nil || !strings.Contains(err.Error(), `content "nope"`) {
		t.Fatalf("err = %v", err)
	}
}

// OnFinished batches are split so no call exceeds the byte cap.
func TestOnFinishedBatchesAreCappedByBytes(t *testing.T) {
	t.Parallel()
	var sizes []int
	l := &loop{cfg: Config{WantsText: true, Workload: &fakeWorkload{onFinished: func(r *workloadv1.OnFinishedRequest) error {
		n := 0
		for _, x := range r.Results {
			n += len(x.Text)
		}
		sizes = append(sizes, n)
		return nil
	}}}}
	big := strings.Repeat("x", 3<<20)
	var batch []*Finished
	for i := range 5 {
		batch = append(batch, &Finished{ID: fmt.Sprint(i), Result: engine.Result{Text: big, Success: true}})
	}
	if err := l.deliver(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, s := range sizes {
		if s > 8<<20 {
			t.Errorf("a batch carried %d bytes of text", s)
		}
		total += s
	}
	if total != 5*len(big) || len(sizes) < 2 {
		t.Fatalf("batches %v", sizes)
	}
}

// Ctrl-C after the workload has sent everything and said it is done (the
// tail of every run): the drain timeout still bounds the wait, and the
// cancelled requests are recorded as failed without asking the workload.
func TestDrainTimeoutAfterDone(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	wl := &fakeWorkload{step: func(r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
		if r.Phase == workloadv1.Phase_PHASE_WARMUP {
			return &workloadv1.StepResponse{Next: done()}, nil
		}
		return &workloadv1.StepResponse{Requests: []*workloadv1.Request{chat("slow0", "x"), chat("slow1", "x")}, Next: done()}, nil
	}, onFinished: func(*workloadv1.OnFinishedRequest) error {
		// As a plugin that got the terminal's Ctrl-C too: it is not told
		// of results after the interrupt, so this error never surfaces.
		return errors.New("workload plugin: OnFinished failed: context canceled")
	}}
	snd := &fakeSender{delay: func(engine.Request) time.Duration { return time.Hour }}
	rec := &recorder{}
	time.AfterFunc(20*time.Millisecond, cancel)
	type ran struct {
		out Outcome
		err error
	}
	ch := make(chan ran, 1)
	go func() {
		out, err := Run(ctx, Config{Workload: wl, Sender: snd, Observer: rec, Log: zerolog.Nop(), DrainTimeout: 50 * time.Millisecond})
		ch <- ran{out, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil || !r.out.Interrupted || len(rec.finished) != 2 {
			t.Fatalf("out %+v err %v finished %d", r.out, r.err, len(rec.finished))
		}
		for _, f := range rec.finished {
			if f.Result.Success || f.Result.Error == "" {
				t.Errorf("%s: want recorded as failed with its error, got %+v", f.ID, f.Result)
			}
		}
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("Run still waiting for in-flight requests 10 s after Ctrl-C with a 50 ms drain timeout")
	}
}

// An observer error while the last requests finish (the journal cannot be
// written) is returned, not dropped because the workload was already done.
func TestObserverErrorAfterDone(t *testing.T) {
	t.Parallel()
	wl := &fakeWorkload{step: func(r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
		if r.Phase == workloadv1.Phase_PHASE_WARMUP {
			return &workloadv1.StepResponse{Next: done()}, nil
		}
		return &workloadv1.StepResponse{Requests: []*workloadv1.Request{chat("a", "x")}, Next: done()}, nil
	}}
	snd := &fakeSender{delay: func(engine.Request) time.Duration { return 10 * time.Millisecond }}
	rec := &recorder{fail: errors.New("journal: no space left on device")}
	_, err := Run(context.Background(), Config{Workload: wl, Sender: snd, Observer: rec, Log: zerolog.Nop()})
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("err = %v, want the observer's error", err)
	}
}
