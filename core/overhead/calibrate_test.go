package overhead

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/dispatch"
	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/sdk/host/runloop"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/workload"
)

func TestScheduleOf(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	recs := []record.Record{
		{Phase: record.Warmup, RequestID: "w0", Scheduled: at(-time.Second), InputTokens: 9, OutputTokens: 1},
		{Phase: record.Measure, RequestID: "b", Scheduled: at(250 * ms), Submit: at(251 * ms), InputTokens: 2000, OutputTokens: 1},
		{Phase: record.Measure, RequestID: "a", Scheduled: at(0), Submit: at(2 * ms), InputTokens: 100, OutputTokens: 128},
		// Failed: no tokens reported; it is replayed at the smallest size.
		{Phase: record.Measure, RequestID: "c", Scheduled: at(250 * ms), Submit: at(253 * ms)},
		// No scheduled time (a journal that lacks it): due at its submit.
		{Phase: record.Measure, RequestID: "d", Submit: at(400 * ms), InputTokens: 5, OutputTokens: 3},
	}
	want := []replayed{
		{id: "a", offset: 0, words: 100, maxTokens: 128},
		{id: "b", offset: 250 * ms, words: 2000, maxTokens: 1},
		{id: "c", offset: 250 * ms, words: 1, maxTokens: 1},
		{id: "d", offset: 400 * ms, words: 5, maxTokens: 3},
	}
	if diff := cmp.Diff(want, scheduleOf(recs), cmp.AllowUnexported(replayed{})); diff != "" {
		t.Errorf("schedule (-want +got):\n%s", diff)
	}
	if got := scheduleOf(recs[:1]); len(got) != 0 {
		t.Errorf("warmup only: %v, want nothing to replay", got)
	}
	cfg := zeroCostEngine(want)
	if cfg.TimeScale != 0 || cfg.GPUGB != 0 || cfg.CPUGB != 0 || cfg.DiskGB != 0 || cfg.MaxModelLen < 2001 {
		t.Errorf("engine %+v: want no costs, no cache tiers, room for 2,001 tokens", cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
}

// recordingSender answers at once and keeps what it was sent.
type recordingSender struct {
	mu   sync.Mutex
	reqs []engine.Request
	fail map[string]bool
}

func (s *recordingSender) Send(_ context.Context, req engine.Request) engine.Result {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	now := time.Now()
	if s.fail[req.ID] {
		return engine.Result{ID: req.ID, Error: "boom", Submit: now, Finish: now}
	}
	return engine.Result{ID: req.ID, Success: true, Submit: now, FirstToken: now.Add(time.Microsecond), Finish: now, OutputTokens: 1}
}

// A replay sends each request of the plan with its prompt length and
// max_tokens, measures every one, and counts the failed. No timing is
// asserted.
func TestReplay(t *testing.T) {
	t.Parallel()
	plan := []replayed{
		{id: "a", offset: 0, words: 3, maxTokens: 7},
		{id: "b", offset: 0, words: 1, maxTokens: 1},
		{id: "c", offset: 2 * time.Millisecond, words: 5, maxTokens: 2},
	}
	s := &recordingSender{fail: map[string]bool{"b": true}}
	m := &calibrationSamples{}
	for range 2 {
		if err := replay(context.Background(), s, plan, m); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]string{}
	for _, r := range s.reqs {
		got[r.ID] = r.Messages[0].Content + "|" + strconv.Itoa(r.MaxTokens)
	}
	want := map[string]string{"a": "hi hi hi|7", "b": "hi|1", "c": "hi hi hi hi hi|2"}
	if diff := cmp.Diff(want, got); diff != "" || len(s.reqs) != 6 {
		t.Errorf("%d requests sent; prompts and max_tokens (-want +got):\n%s", len(s.reqs), diff)
	}
	c := m.calibration()
	if len(m.lagMs) != 6 || len(m.ttftMs) != 4 || c.Failed != 2 {
		t.Errorf("lags %d, TTFTs %d, failed %d; want 6, 4, 2", len(m.lagMs), len(m.ttftMs), c.Failed)
	}
	if !(c.TTFTP50Ms <= c.TTFTP99Ms && c.TTFTP99Ms <= c.TTFTMaxMs) || !(c.DispatchLagP50Ms <= c.DispatchLagP99Ms) {
		t.Errorf("percentiles out of order: %+v", c)
	}
}

// The built-in engine at zero cost answers every request of a journal's
// schedule, each replay.
func TestCalibrateAgainstTheBuiltinEngine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), record.JournalName)
	j, err := record.CreateJournal(path, record.Run{ID: "r1", Workload: "w", Started: at(0)})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range []time.Duration{0, 0, 3 * time.Millisecond} {
		r := &record.Record{RunID: "r1", Phase: record.Measure, RequestID: "q" + strconv.Itoa(i), Success: true,
			Scheduled: at(d), Submit: at(d), InputTokens: 200, OutputTokens: 4}
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(nil); err != nil {
		t.Fatal(err)
	}
	c, err := Calibrate{Journal: path, Repeat: 2, Log: zerolog.Nop()}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.Requests != 3 || c.Repeat != 2 || c.Failed != 0 || c.Span != 3*time.Millisecond || c.CPUs < 1 {
		t.Errorf("calibration %+v: want 3 requests, 2 replays, none failed, a 3 ms span", c)
	}
	if math.IsNaN(c.TTFTP99Ms) || math.IsNaN(c.DispatchLagP99Ms) || c.TTFTP99Ms < 0 {
		t.Errorf("TTFT and dispatch lag not measured: %+v", c)
	}
}

func TestCalibrateJournalErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	warmupOnly := filepath.Join(dir, "warmup.jsonl")
	j, err := record.CreateJournal(warmupOnly, record.Run{ID: "r1", Workload: "w", Started: at(0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append(&record.Record{RunID: "r1", Phase: record.Warmup, RequestID: "w0", Scheduled: at(0), Submit: at(0)}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(nil); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nope.jsonl")
	for _, tt := range []struct {
		path string
		want string
	}{
		{missing, "--journal " + missing + ": "},
		{warmupOnly, "--journal " + warmupOnly + ": no measured requests to replay"},
	} {
		_, err := Calibrate{Journal: tt.path, Log: zerolog.Nop()}.Run(context.Background())
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to start %q", tt.path, err, tt.want)
		}
		if tt.path == warmupOnly && !errors.Is(err, errNoMeasured) {
			t.Errorf("%v is not errNoMeasured", err)
		}
	}
}

// loopEvents is a run loop observer that keeps what the loop told it.
type loopEvents struct {
	mu       sync.Mutex
	phases   []string
	start    time.Time // the measured phase's
	sent     []string
	finished []runloop.Finished[dispatch.Measured]
}

func (e *loopEvents) PhaseStarted(ph protocol.Phase, t time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.phases = append(e.phases, "start "+ph.String())
	if ph == protocol.Measure {
		e.start = t
	}
}

func (e *loopEvents) PhaseEnded(ph protocol.Phase, _ time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.phases = append(e.phases, "end "+ph.String())
}

func (e *loopEvents) Sent(out *runloop.Outgoing) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sent = append(e.sent, out.ID)
}

func (e *loopEvents) Finished(f *runloop.Finished[dispatch.Measured]) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.finished = append(e.finished, *f)
	return nil
}

// lmbench calibrate dispatches as a run does: through runloop.Run on the
// real-clock transport of core/dispatch (the Observer[dispatch.Measured]
// a run's observer is too). The loop runs both phases, turns each
// request's scheduled offset into its due time from the measured phase's
// start, numbers the finishes, and the transport's measurement is the
// engine sender's answer to that very request.
func TestCalibrateReplaysThroughTheRunLoop(t *testing.T) {
	t.Parallel()
	offsets := map[string]time.Duration{"q0": 0, "q1": 2 * time.Millisecond, "q2": 2 * time.Millisecond}
	path := filepath.Join(t.TempDir(), record.JournalName)
	j, err := record.CreateJournal(path, record.Run{ID: "r1", Workload: "w", Started: at(0)})
	if err != nil {
		t.Fatal(err)
	}
	recs := []*record.Record{{RunID: "r1", Phase: record.Warmup, RequestID: "w0", Success: true, Scheduled: at(-time.Second), Submit: at(-time.Second), InputTokens: 5, OutputTokens: 1}}
	for _, id := range []string{"q0", "q1", "q2"} {
		recs = append(recs, &record.Record{RunID: "r1", Phase: record.Measure, RequestID: id, Success: true,
			Scheduled: at(offsets[id]), Submit: at(offsets[id]), InputTokens: 50, OutputTokens: 3})
	}
	for _, r := range recs {
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(nil); err != nil {
		t.Fatal(err)
	}
	ev := &loopEvents{}
	c, err := Calibrate{Journal: path, Log: zerolog.Nop(), observer: ev}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.Requests != 3 || c.Failed != 0 {
		t.Errorf("calibration %+v: want 3 requests, none failed", c)
	}
	if diff := cmp.Diff([]string{"start warmup", "end warmup", "start measure", "end measure"}, ev.phases); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"q0", "q1", "q2"}, ev.sent); diff != "" {
		t.Errorf("sent, in due order (-want +got):\n%s", diff)
	}
	if len(ev.finished) != 3 {
		t.Fatalf("%d finished, want 3", len(ev.finished))
	}
	for i, f := range ev.finished {
		r := f.Measured.Result
		if f.Seq != int64(i+1) || f.Req.Phase != protocol.Measure || !f.Req.Explicit || f.Req.Due.Sub(ev.start) != offsets[f.Req.ID] {
			t.Errorf("finished %d: seq %d, phase %v, explicit %v, due %v after the start; want seq %d, measured, scheduled at %v",
				i, f.Seq, f.Req.Phase, f.Req.Explicit, f.Req.Due.Sub(ev.start), i+1, offsets[f.Req.ID])
		}
		if !r.Success || r.ID != f.Req.ID || r.InputTokens != 50 || !f.Outcome.Success {
			t.Errorf("finished %s: the engine's answer %+v, want a success to that request with its 50-word prompt", f.Req.ID, r)
		}
	}
}

// The replay workload hands over what falls due within the SDK's
// look-ahead window, at most a batch a Step, scheduled at each offset,
// and asks for its next Step as an open-loop SDK workload does; it sends
// nothing in warmup.
func TestReplayWorkloadHandsOverAhead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var plan []replayed
	for i := range workload.AheadBatch + 2 {
		plan = append(plan, replayed{id: "b" + strconv.Itoa(i), words: 2, maxTokens: 1})
	}
	plan = append(plan, replayed{id: "late", offset: 3 * time.Second, words: 1, maxTokens: 1})
	w := newReplayWorkload(plan)
	step := func(ph protocol.Phase, at time.Duration) protocol.StepResponse {
		t.Helper()
		resp, err := w.Step(ctx, protocol.StepRequest{Phase: ph, Offset: at})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if r := step(protocol.Warmup, 0); len(r.Requests) != 0 || r.Next.Kind != protocol.NextDone {
		t.Errorf("warmup: %d requests, next %+v; want none, done", len(r.Requests), r.Next)
	}
	r := step(protocol.Measure, 0)
	if len(r.Requests) != workload.AheadBatch || r.Next != (protocol.Next{Kind: protocol.NextWakeAt, At: 0}) {
		t.Fatalf("first step: %d requests, next %+v; want a full batch, again at once", len(r.Requests), r.Next)
	}
	if q := r.Requests[1]; q.ID != "b1" || !q.HasScheduled || q.Scheduled != 0 || q.MaxTokens != 1 ||
		len(q.Messages) != 1 || q.Messages[0].Role != "user" || q.Messages[0].Content[0].Text != "hi hi" {
		t.Errorf("request %+v: want b1, scheduled at 0, one user message of two words", q)
	}
	r = step(protocol.Measure, time.Millisecond)
	wake := workload.AheadWake(workload.AheadWindow, 3*time.Second, time.Millisecond)
	if len(r.Requests) != 2 || r.Next != (protocol.Next{Kind: protocol.NextWakeAt, At: wake}) {
		t.Fatalf("second step: %d requests, next %+v; want the batch's rest, then a wake at %v", len(r.Requests), r.Next, wake)
	}
	r = step(protocol.Measure, wake)
	if len(r.Requests) != 1 || r.Requests[0].ID != "late" || r.Requests[0].Scheduled != 3*time.Second || r.Next.Kind != protocol.NextDone {
		t.Errorf("last step: %+v; want late, scheduled at 3 s, then done", r)
	}
}

// A journal's ids are replayed as they are, but an id seen twice is made
// unique: the run loop refuses a repeated one.
func TestScheduleOfRepeatedIDs(t *testing.T) {
	t.Parallel()
	recs := []record.Record{
		{Phase: record.Measure, RequestID: "a", Scheduled: at(0)},
		{Phase: record.Measure, RequestID: "a", Scheduled: at(time.Millisecond)},
	}
	var ids []string
	for _, p := range scheduleOf(recs) {
		ids = append(ids, p.id)
	}
	if diff := cmp.Diff([]string{"a", "a#2"}, ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
}
