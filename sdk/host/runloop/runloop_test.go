package runloop

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// The tests run the loop on a virtual clock (virtual, below): time moves
// only when the loop waits, and jumps to the next event, so every offset
// and every grouping of results is exact.

const ms = time.Millisecond

// --- the virtual transport ---

// reply is how the virtual engine answers one request.
type reply struct {
	after time.Duration // latency
	hang  bool          // never finishes on its own, only when abandoned
	fail  string        // error message of a failed request
	text  string
	calls []protocol.ToolCall
}

type pending struct {
	at   time.Duration
	hang bool
	seq  int
	f    Finished[time.Duration]
}

type sentAt struct {
	at  time.Duration // virtual time of the Send
	req *Outgoing
}

type hook struct {
	at time.Duration
	fn func()
}

// virtual is a Transport on virtual time. Its measurement (M) is the
// virtual time the request was sent at.
type virtual struct {
	t         *testing.T
	base      time.Time
	now       time.Duration // since base
	answer    func(*Outgoing) reply
	onSend    func(*Outgoing)
	pending   []pending
	sent      []sentAt
	seq       int
	hooks     []hook
	abandoned []string
	waits     int
}

func newVirtual(t *testing.T) *virtual {
	return &virtual{t: t, base: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

// at runs fn once virtual time reaches d (an event Wait jumps to).
func (v *virtual) at(d time.Duration, fn func()) { v.hooks = append(v.hooks, hook{d, fn}) }

func (v *virtual) Now() time.Time { return v.base.Add(v.now) }

func (v *virtual) Send(req *Outgoing) {
	v.sent = append(v.sent, sentAt{v.now, req})
	if v.onSend != nil {
		v.onSend(req)
	}
	r := reply{after: 10 * ms}
	if v.answer != nil {
		r = v.answer(req)
	}
	out := Outcome{Success: r.fail == "", Error: r.fail, TTFT: -1, Latency: r.after.Seconds(), Finish: v.base.Add(v.now + r.after)}
	if out.Success {
		out.Text, out.ToolCalls, out.TTFT = r.text, r.calls, r.after.Seconds()/2
		out.InputTokens, out.OutputTokens, out.CachedTokens = 10, 2, 8
	}
	v.seq++
	v.pending = append(v.pending, pending{at: v.now + r.after, hang: r.hang, seq: v.seq,
		f: Finished[time.Duration]{Req: req, Outcome: out, Measured: v.now}})
}

func (v *virtual) Poll() []Finished[time.Duration] {
	slices.SortStableFunc(v.pending, func(a, b pending) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq))
	})
	var out []Finished[time.Duration]
	var rest []pending
	for _, p := range v.pending {
		if !p.hang && p.at <= v.now {
			out = append(out, p.f)
		} else {
			rest = append(rest, p)
		}
	}
	v.pending = rest
	return out
}

func (v *virtual) Wait(ctx context.Context, until time.Time) []Finished[time.Duration] {
	v.waits++
	if v.waits > 100_000 {
		v.t.Fatalf("the loop waited %d times: it spins", v.waits)
	}
	if ctx.Err() != nil {
		return nil
	}
	next, ok := time.Duration(0), false
	consider := func(d time.Duration) {
		if !ok || d < next {
			next, ok = d, true
		}
	}
	for _, p := range v.pending {
		if !p.hang {
			consider(p.at)
		}
	}
	for _, h := range v.hooks {
		consider(h.at)
	}
	if !until.IsZero() {
		consider(until.Sub(v.base))
	}
	if !ok {
		v.t.Fatalf("at %v the loop waits with no deadline and nothing that can finish: it would block forever", v.now)
	}
	v.now = max(v.now, next)
	var due []hook
	v.hooks = slices.DeleteFunc(v.hooks, func(h hook) bool {
		if h.at <= v.now {
			due = append(due, h)
			return true
		}
		return false
	})
	for _, h := range due {
		h.fn()
	}
	return v.Poll()
}

func (v *virtual) Abandon() {
	for i := range v.pending {
		p := &v.pending[i]
		v.abandoned = append(v.abandoned, p.f.Req.ID)
		p.at, p.hang = v.now, false
		p.f.Outcome = Outcome{Error: "context canceled", TTFT: -1, Latency: (v.now - p.f.Measured).Seconds(), Finish: v.Now()}
	}
}

// inFlight is how many requests the transport has not handed back.
func (v *virtual) inFlight() int { return len(v.pending) }

// sentTo returns the requests sent, by id.
func (v *virtual) sentTo() map[string]sentAt {
	m := map[string]sentAt{}
	for _, s := range v.sent {
		m[s.req.ID] = s
	}
	return m
}

func (v *virtual) sentIDs() []string {
	var ids []string
	for _, s := range v.sent {
		ids = append(ids, s.req.ID)
	}
	return ids
}

// --- the workload and observer ---

// fakeWorkload is a func-field fake of the workload protocol.
type fakeWorkload struct {
	step       func(ctx context.Context, req protocol.StepRequest) (protocol.StepResponse, error)
	onFinished func(ctx context.Context, results []protocol.Result) error
}

func (f *fakeWorkload) Describe(context.Context, protocol.HostInfo) (protocol.WorkloadDescription, error) {
	return protocol.WorkloadDescription{}, nil
}

func (f *fakeWorkload) Configure(context.Context, protocol.WorkloadConfig) (protocol.Configured, error) {
	return protocol.Configured{}, nil
}

func (f *fakeWorkload) Step(ctx context.Context, req protocol.StepRequest) (protocol.StepResponse, error) {
	return f.step(ctx, req)
}

func (f *fakeWorkload) OnFinished(ctx context.Context, results []protocol.Result) error {
	if f.onFinished == nil {
		return nil
	}
	return f.onFinished(ctx, results)
}

// script answers each phase's Steps with its responses in turn, then Done.
func script(warmup, measure []protocol.StepResponse) *fakeWorkload {
	calls := map[protocol.Phase]int{}
	return &fakeWorkload{step: func(_ context.Context, r protocol.StepRequest) (protocol.StepResponse, error) {
		list := measure
		if r.Phase == protocol.Warmup {
			list = warmup
		}
		i := calls[r.Phase]
		calls[r.Phase]++
		if i >= len(list) {
			return protocol.StepResponse{Next: done}, nil
		}
		return list[i], nil
	}}
}

// listener wraps a workload and logs, per phase, every call it gets:
// "step @5ms in=1 [a]" (offset, in flight, results in the Step) and
// "told [a b]" (OnFinished).
type listener struct {
	protocol.WorkloadService
	log   map[protocol.Phase][]string
	steps []protocol.StepRequest
	heard []protocol.Result // every result, by whichever call carried it
}

func listen(wl protocol.WorkloadService) *listener {
	return &listener{WorkloadService: wl, log: map[protocol.Phase][]string{}}
}

func (l *listener) Step(ctx context.Context, req protocol.StepRequest) (protocol.StepResponse, error) {
	if len(l.steps) > 10_000 {
		panic("the loop steps without end")
	}
	l.steps = append(l.steps, req)
	l.heard = append(l.heard, req.Finished...)
	l.log[req.Phase] = append(l.log[req.Phase], fmt.Sprintf("step @%v in=%d %v", req.Offset, req.InFlight, ids(req.Finished)))
	return l.WorkloadService.Step(ctx, req)
}

func (l *listener) OnFinished(ctx context.Context, results []protocol.Result) error {
	l.heard = append(l.heard, results...)
	ph := protocol.Phase(0)
	if len(results) > 0 {
		ph = results[0].Phase
	}
	l.log[ph] = append(l.log[ph], fmt.Sprintf("told %v", ids(results)))
	return l.WorkloadService.OnFinished(ctx, results)
}

func (l *listener) stepsOf(ph protocol.Phase) int {
	n := 0
	for _, s := range l.steps {
		if s.Phase == ph {
			n++
		}
	}
	return n
}

func ids(rs []protocol.Result) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

// recorder is an Observer that keeps everything.
type recorder struct {
	events   []string
	starts   map[protocol.Phase]time.Time
	ends     map[protocol.Phase]time.Time
	finished []Finished[time.Duration]
	fail     func(*Finished[time.Duration]) error
}

func (r *recorder) PhaseStarted(ph protocol.Phase, start time.Time) {
	r.events = append(r.events, "start "+ph.String())
	r.starts[ph] = start
}

func (r *recorder) Sent(o *Outgoing) { r.events = append(r.events, "sent "+o.ID) }

func (r *recorder) Finished(f *Finished[time.Duration]) error {
	r.events = append(r.events, "finished "+f.Req.ID)
	r.finished = append(r.finished, *f)
	if r.fail != nil {
		return r.fail(f)
	}
	return nil
}

func (r *recorder) PhaseEnded(ph protocol.Phase, end time.Time) {
	r.events = append(r.events, "end "+ph.String())
	r.ends[ph] = end
}

func (r *recorder) finishedByID() map[string]Finished[time.Duration] {
	m := map[string]Finished[time.Duration]{}
	for _, f := range r.finished {
		m[f.Req.ID] = f
	}
	return m
}

// harness is one run: the workload (logged), the virtual transport, the
// observer, and a configuration with FinishedInStep and response text.
type harness struct {
	v     *virtual
	wl    *listener
	obs   *recorder
	cfg   Config[time.Duration]
	drain []string // OnDrain calls
}

func newHarness(t *testing.T, wl protocol.WorkloadService) *harness {
	h := &harness{v: newVirtual(t), wl: listen(wl),
		obs: &recorder{starts: map[protocol.Phase]time.Time{}, ends: map[protocol.Phase]time.Time{}}}
	h.cfg = Config[time.Duration]{
		Workload: h.wl, Transport: h.v, Observer: h.obs, Plugin: "w", WantsText: true,
		Capabilities: protocol.Capabilities{protocol.FinishedInStep},
		OnDrain: func(n int, abandoned bool) {
			h.drain = append(h.drain, fmt.Sprintf("%d in flight, abandoned %v", n, abandoned))
		},
	}
	return h
}

// latencies answers by request id (10 ms for the others); a negative
// latency hangs.
func (h *harness) latencies(lat map[string]time.Duration) {
	h.v.answer = func(o *Outgoing) reply {
		d, ok := lat[o.ID]
		if !ok {
			d = 10 * ms
		}
		return reply{after: max(d, 0), hang: d < 0}
	}
}

func (h *harness) run(ctx context.Context) (Result, error) { return Run(ctx, h.cfg) }

// --- request and response helpers ---

var done = protocol.Next{Kind: protocol.NextDone}

func belowN(n int) protocol.Next {
	return protocol.Next{Kind: protocol.NextWaitForInFlightBelow, InFlightBelow: n}
}

func wakeAt(d time.Duration) protocol.Next { return protocol.Next{Kind: protocol.NextWakeAt, At: d} }
func wakeAtOrFinish(d time.Duration) protocol.Next {
	return protocol.Next{Kind: protocol.NextWakeAtOrFinish, At: d}
}

var waitForFinish = protocol.Next{Kind: protocol.NextWaitForFinish}

func chat(id string, segs ...protocol.Segment) protocol.Request {
	if len(segs) == 0 {
		segs = []protocol.Segment{{Text: "hi " + id}}
	}
	return protocol.Request{ID: id, MaxTokens: 4, Messages: []protocol.Message{{Role: "user", Content: segs}}}
}

func due(r protocol.Request, d time.Duration) protocol.Request {
	r.Scheduled, r.HasScheduled = d, true
	return r
}

func send(next protocol.Next, reqs ...protocol.Request) protocol.StepResponse {
	return protocol.StepResponse{Requests: reqs, Next: next}
}

// --- tests ---

// Every next action, on exact virtual time. The log is the measured
// phase's calls to the workload (FinishedInStep negotiated).
func TestNextActions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		measure     []protocol.StepResponse
		latency     map[string]time.Duration
		want        []string
		wantElapsed time.Duration
		wantErr     string
	}{
		{name: "WakeAt in the future: stepped at At",
			measure: []protocol.StepResponse{send(wakeAt(5 * ms))},
			want:    []string{"step @0s in=0 []", "step @5ms in=0 []"}, wantElapsed: 5 * ms},
		{name: "WakeAt now with nothing sent: polled every 1 ms",
			measure: []protocol.StepResponse{send(wakeAt(0)), send(wakeAt(0))},
			want:    []string{"step @0s in=0 []", "step @1ms in=0 []", "step @2ms in=0 []"}, wantElapsed: 2 * ms},
		{name: "WakeAt in the past with nothing sent: polled too",
			measure: []protocol.StepResponse{send(wakeAt(10 * ms)), send(wakeAt(3 * ms))},
			want:    []string{"step @0s in=0 []", "step @10ms in=0 []", "step @11ms in=0 []"}, wantElapsed: 11 * ms},
		{name: "WakeAt now with a request sent: stepped again at once",
			measure: []protocol.StepResponse{send(wakeAt(0), chat("a"))},
			want:    []string{"step @0s in=0 []", "step @0s in=1 []", "told [a]"}, wantElapsed: 10 * ms},
		{name: "WakeAt in the past with a request sent: stepped again at once",
			measure: []protocol.StepResponse{send(wakeAt(10 * ms)), send(wakeAt(5*ms), chat("a"))},
			want:    []string{"step @0s in=0 []", "step @10ms in=0 []", "step @10ms in=1 []", "told [a]"}, wantElapsed: 20 * ms},
		{name: "WakeAt does not wake on a finish",
			measure: []protocol.StepResponse{send(wakeAt(8*ms), chat("a"))}, latency: map[string]time.Duration{"a": 3 * ms},
			want: []string{"step @0s in=0 []", "step @8ms in=0 [a]"}, wantElapsed: 8 * ms},
		{name: "WakeAtOrFinish: a finish before At wakes it",
			measure: []protocol.StepResponse{send(wakeAtOrFinish(10*ms), chat("a"))}, latency: map[string]time.Duration{"a": 3 * ms},
			want: []string{"step @0s in=0 []", "step @3ms in=0 [a]"}, wantElapsed: 3 * ms},
		{name: "WakeAtOrFinish: At before any finish",
			measure: []protocol.StepResponse{send(wakeAtOrFinish(10*ms), chat("a"))}, latency: map[string]time.Duration{"a": 20 * ms},
			want: []string{"step @0s in=0 []", "step @10ms in=1 []", "told [a]"}, wantElapsed: 20 * ms},
		{name: "WaitForFinish: each finish wakes it",
			measure: []protocol.StepResponse{send(waitForFinish, chat("a"), chat("b")), send(waitForFinish)},
			latency: map[string]time.Duration{"a": 5 * ms, "b": 8 * ms},
			want:    []string{"step @0s in=0 []", "step @5ms in=1 [a]", "step @8ms in=0 [b]"}, wantElapsed: 8 * ms},
		{name: "WaitForFinish: simultaneous finishes arrive together",
			measure: []protocol.StepResponse{send(waitForFinish, chat("a"), chat("b"))},
			latency: map[string]time.Duration{"a": 5 * ms, "b": 5 * ms},
			want:    []string{"step @0s in=0 []", "step @5ms in=0 [a b]"}, wantElapsed: 5 * ms},
		{name: "Done: the phase ends once what is in flight finished, and the workload is told",
			measure: []protocol.StepResponse{send(done, chat("a"))}, latency: map[string]time.Duration{"a": 7 * ms},
			want: []string{"step @0s in=0 []", "told [a]"}, wantElapsed: 7 * ms},
		{name: "Done at once",
			measure: []protocol.StepResponse{send(done)},
			want:    []string{"step @0s in=0 []"}},
		{name: "no next action",
			measure: []protocol.StepResponse{{}},
			want:    []string{"step @0s in=0 []"}, wantErr: "measure phase: workload w: step returned no next action"},
		{name: "no next action after sending: what was sent is drained, the workload is not told",
			measure: []protocol.StepResponse{send(protocol.Next{}, chat("a"))},
			want:    []string{"step @0s in=0 []"}, wantElapsed: 10 * ms, wantErr: "measure phase: workload w: step returned no next action"},
		{name: "WaitForFinish with nothing in flight stalls",
			measure: []protocol.StepResponse{send(waitForFinish)},
			want:    []string{"step @0s in=0 []"}, wantErr: "measure phase: workload w: " + ErrStalled.Error()},
		{name: "WaitForFinish once everything was heard stalls",
			measure: []protocol.StepResponse{send(waitForFinish, chat("a")), send(waitForFinish)}, latency: map[string]time.Duration{"a": 2 * ms},
			want: []string{"step @0s in=0 []", "step @2ms in=0 [a]"}, wantElapsed: 2 * ms, wantErr: "measure phase: workload w: " + ErrStalled.Error()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, script(nil, tc.measure))
			h.latencies(tc.latency)
			res, err := h.run(context.Background())
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Run = %v", err)
			case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
				t.Fatalf("Run = %v, want %q", err, tc.wantErr)
			}
			if d := gocmp.Diff(tc.want, h.wl.log[protocol.Measure]); d != "" {
				t.Errorf("measure phase calls (-want +got):\n%s", d)
			}
			if res.MeasureElapsed != tc.wantElapsed {
				t.Errorf("MeasureElapsed = %v, want %v", res.MeasureElapsed, tc.wantElapsed)
			}
			if res.MeasureSteps != h.wl.stepsOf(protocol.Measure) || res.WarmupSteps != h.wl.stepsOf(protocol.Warmup) {
				t.Errorf("Result steps %d/%d, the workload got %d/%d", res.WarmupSteps, res.MeasureSteps,
					h.wl.stepsOf(protocol.Warmup), h.wl.stepsOf(protocol.Measure))
			}
			if got, want := len(h.obs.finished), len(h.v.sent); got != want {
				t.Errorf("%d finished, %d sent: every request sent must be recorded", got, want)
			}
			if res.Interrupted {
				t.Error("Interrupted without a cancellation")
			}
		})
	}
}

func TestStalledIsErrStalled(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script([]protocol.StepResponse{send(waitForFinish)}, nil))
	_, err := h.run(context.Background())
	if !errors.Is(err, ErrStalled) || !strings.HasPrefix(err.Error(), "warmup phase: workload w: ") {
		t.Fatalf("Run = %v, want ErrStalled naming the phase and the workload", err)
	}
	if n := h.wl.stepsOf(protocol.Measure); n != 0 {
		t.Errorf("measure stepped %d times after warmup failed", n)
	}
}

// The phases run in order, each one's requests finish before the next
// starts, the observer hears of each request before the workload, and Seq
// counts completions across the run.
func TestPhasesRunInOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(
		[]protocol.StepResponse{send(done, chat("w0"), chat("w1"))},
		[]protocol.StepResponse{send(done, chat("m0"))}))
	h.latencies(map[string]time.Duration{"w0": 5 * ms, "w1": 3 * ms, "m0": 4 * ms})
	res, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"start warmup", "sent w0", "sent w1", "finished w1", "finished w0", "end warmup",
		"start measure", "sent m0", "finished m0", "end measure",
	}
	if d := gocmp.Diff(want, h.obs.events); d != "" {
		t.Errorf("observer events (-want +got):\n%s", d)
	}
	var seqs []string
	for _, f := range h.obs.finished {
		seqs = append(seqs, fmt.Sprintf("%s:%d:%v", f.Req.ID, f.Seq, f.Req.Phase))
	}
	if d := gocmp.Diff([]string{"w1:1:warmup", "w0:2:warmup", "m0:3:measure"}, seqs); d != "" {
		t.Errorf("id:seq:phase (-want +got):\n%s", d)
	}
	base := h.v.base
	if !h.obs.starts[protocol.Warmup].Equal(base) || !h.obs.ends[protocol.Warmup].Equal(base.Add(5*ms)) ||
		!h.obs.starts[protocol.Measure].Equal(base.Add(5*ms)) || !h.obs.ends[protocol.Measure].Equal(base.Add(9*ms)) {
		t.Errorf("phase bounds %v .. %v", h.obs.starts, h.obs.ends)
	}
	if !res.MeasureStart.Equal(base.Add(5*ms)) || !res.MeasureEnd.Equal(base.Add(9*ms)) ||
		res.WarmupElapsed != 5*ms || res.MeasureElapsed != 4*ms || res.WarmupSteps != 1 || res.MeasureSteps != 1 {
		t.Errorf("Result = %+v", res)
	}
	if d := gocmp.Diff([]string{"step @0s in=0 []", "told [w1 w0]"}, h.wl.log[protocol.Warmup]); d != "" {
		t.Errorf("warmup's results must be told before the phase ends (-want +got):\n%s", d)
	}
}

// A request's due time: implicit, when the Step that returned it was due;
// explicit, what the workload set (past or future, sent at once). A wake-up
// time already past when it was asked for counts as that moment. Both are
// offsets in the request's phase.
func TestDueTimes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(
		[]protocol.StepResponse{send(done, due(chat("w"), 3*ms))},
		[]protocol.StepResponse{
			send(wakeAt(5*ms), chat("a")),
			send(wakeAtOrFinish(100*ms), chat("b"), due(chat("c"), 2*ms), due(chat("d"), 9*ms)),
			send(wakeAt(7*ms), chat("e")), // at 10 ms: 7 ms has passed
			send(done, chat("f")),
		}))
	h.latencies(map[string]time.Duration{"w": 10 * ms, "a": 10 * ms, "b": 50 * ms, "c": 50 * ms, "d": 50 * ms})
	if _, err := h.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	type sent struct {
		At, Due  time.Duration // virtual time sent; due, as an offset in the phase
		Explicit bool
	}
	got := map[string]sent{}
	for id, s := range h.v.sentTo() {
		start := h.obs.starts[s.req.Phase]
		got[id] = sent{At: s.at, Due: s.req.Due.Sub(start), Explicit: s.req.Explicit}
	}
	// w is handed over ahead and goes out when due, at 3 ms; it takes
	// 10 ms, so the measured phase starts at 13 ms.
	want := map[string]sent{
		"w": {At: 3 * ms, Due: 3 * ms, Explicit: true},
		"a": {At: 13 * ms, Due: 0},
		"b": {At: 18 * ms, Due: 5 * ms},
		"c": {At: 18 * ms, Due: 2 * ms, Explicit: true}, // late already: at once
		"d": {At: 22 * ms, Due: 9 * ms, Explicit: true}, // ahead: held until due
		"e": {At: 23 * ms, Due: 10 * ms},                // woken by a's finish
		"f": {At: 23 * ms, Due: 10 * ms},                // 7 ms had passed when e asked for it: due then, at once
	}
	if d := gocmp.Diff(want, got); d != "" {
		t.Errorf("sent requests (-want +got):\n%s", d)
	}
}

// Content is registered before a response's requests are read, resolved
// into their text, and dropped once released (after the releasing
// response's own requests were resolved); referencing it later is an error.
func TestContent(t *testing.T) {
	t.Parallel()
	ref := func(id string) protocol.Segment { return protocol.Segment{Ref: id} }
	text := func(s string) protocol.Segment { return protocol.Segment{Text: s} }
	r1 := chat("r1", ref("doc"), text(" Q?"))
	r1.Messages = append([]protocol.Message{{Role: "system", Content: []protocol.Segment{ref("sys")}}}, r1.Messages...)
	r2 := protocol.Request{ID: "r2", Completion: true, MaxTokens: 3, Prompt: []protocol.Segment{ref("doc"), text(" Summary:")}}
	h := newHarness(t, script(
		[]protocol.StepResponse{{
			Contents: []protocol.Content{{ID: "doc", Text: "long document"}, {ID: "sys", Text: "Be terse."}},
			Requests: []protocol.Request{r1, r2}, Released: []string{"sys"}, Next: done,
		}},
		[]protocol.StepResponse{
			// Registered again with the same text: fine.
			{Contents: []protocol.Content{{ID: "doc", Text: "long document"}}, Requests: []protocol.Request{chat("r3", ref("doc"))},
				Released: []string{"doc"}, Next: wakeAt(time.Millisecond)},
			send(done, chat("r4", ref("doc"))),
		}))
	_, err := h.run(context.Background())
	want := `measure phase: workload w returned an invalid request: request "r4": messages[0].content[0]: ` +
		`references content "doc", which is not registered (or was released)`
	if err == nil || err.Error() != want {
		t.Fatalf("Run = %v, want %q", err, want)
	}
	type body struct {
		Messages   []Message
		Prompt     string
		Completion bool
		MaxTokens  int
	}
	got := map[string]body{}
	for id, s := range h.v.sentTo() {
		got[id] = body{s.req.Messages, s.req.Prompt, s.req.Completion, s.req.MaxTokens}
	}
	wantSent := map[string]body{
		"r1": {Messages: []Message{{Role: "system", Content: "Be terse."}, {Role: "user", Content: "long document Q?"}}, MaxTokens: 4},
		"r2": {Prompt: "long document Summary:", Completion: true, MaxTokens: 3},
		"r3": {Messages: []Message{{Role: "user", Content: "long document"}}, MaxTokens: 4},
	}
	if d := gocmp.Diff(wantSent, got); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
}

// The request rules are the Validator's: an invalid request stops the run
// with an error naming the workload, the request and the field; the
// requests before it in the same Step are sent (and drained, and
// recorded), the ones after it are not.
func TestInvalidRequests(t *testing.T) {
	t.Parallel()
	negative := chat("b")
	negative.MaxTokens = -5
	tests := []struct {
		name          string
		warmup        []protocol.StepResponse
		measure       protocol.StepResponse
		wantID, wantF string
		wantProblem   string
		wantSent      []string // in the measured phase
	}{
		{name: "max_tokens -5", measure: send(done, chat("a"), negative, chat("c")),
			wantID: "b", wantF: "max_tokens", wantProblem: "must be >= 1, got -5", wantSent: []string{"a"}},
		{name: "duplicate id in one step", measure: send(done, chat("a"), chat("a")),
			wantID: "a", wantF: "id", wantProblem: "is not unique", wantSent: []string{"a"}},
		{name: "duplicate id across phases", warmup: []protocol.StepResponse{send(done, chat("x"))},
			measure: send(done, chat("y"), chat("x")),
			wantID:  "x", wantF: "id", wantProblem: "is not unique", wantSent: []string{"y"}},
		{name: "empty prompt", measure: send(done, chat("a"), protocol.Request{ID: "p", Completion: true, MaxTokens: 1}),
			wantID: "p", wantF: "prompt", wantProblem: "is empty", wantSent: []string{"a"}},
		{name: "unregistered content", measure: send(done, chat("a"), chat("u", protocol.Segment{Text: "x"}, protocol.Segment{Ref: "nope"})),
			wantID: "u", wantF: "messages[0].content[1]", wantProblem: `references content "nope"`, wantSent: []string{"a"}},
		{name: "content registered again with other text: nothing of the response is sent",
			warmup: []protocol.StepResponse{{Contents: []protocol.Content{{ID: "doc", Text: "one"}}, Next: done}},
			measure: protocol.StepResponse{Contents: []protocol.Content{{ID: "doc", Text: "two"}},
				Requests: []protocol.Request{chat("a")}, Next: done},
			wantF: `content "doc"`, wantProblem: "registered again with different text"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, script(tc.warmup, []protocol.StepResponse{tc.measure}))
			_, err := h.run(context.Background())
			var re *protocol.RequestError
			if !errors.As(err, &re) {
				t.Fatalf("Run = %v, want a *protocol.RequestError", err)
			}
			if re.Plugin != "w" || re.RequestID != tc.wantID || re.Field != tc.wantF || !strings.Contains(re.Problem, tc.wantProblem) {
				t.Errorf("RequestError = %+v, want workload w, request %q, field %q, problem with %q", re, tc.wantID, tc.wantF, tc.wantProblem)
			}
			if !strings.HasPrefix(err.Error(), "measure phase: workload w returned an invalid request: ") {
				t.Errorf("error %q does not name the phase and the workload", err)
			}
			var sent []string
			for _, s := range h.v.sent {
				if s.req.Phase == protocol.Measure {
					sent = append(sent, s.req.ID)
				}
			}
			if d := gocmp.Diff(tc.wantSent, sent); d != "" {
				t.Errorf("measure requests sent (-want +got):\n%s", d)
			}
			var recorded []string
			for _, f := range h.obs.finished {
				if f.Req.Phase == protocol.Measure {
					recorded = append(recorded, f.Req.ID)
				}
			}
			if d := gocmp.Diff(tc.wantSent, recorded); d != "" {
				t.Errorf("measure requests recorded: what was sent must be drained (-want +got):\n%s", d)
			}
			if got := h.wl.log[protocol.Measure]; len(got) != 1 {
				t.Errorf("after an invalid request the workload got %v, want its one Step only", got)
			}
			if len(tc.wantSent) > 0 && (len(h.drain) != 1 || h.drain[0] != "1 in flight, abandoned false") {
				t.Errorf("OnDrain calls %v, want one for the request in flight", h.drain)
			}
		})
	}
}

// The workload hears exactly what it would hear whichever way results
// travel: in the next Step (FinishedInStep) or in an OnFinished call right
// before it. With FinishedInStep, OnFinished only carries what finished
// after a phase's last Step.
func TestFinishedInStepOrOnFinished(t *testing.T) {
	t.Parallel()
	scenario := func() *fakeWorkload {
		return script(
			[]protocol.StepResponse{send(done, chat("w"))},
			[]protocol.StepResponse{
				send(wakeAtOrFinish(5*ms), chat("a"), chat("b"), chat("c")),
				send(wakeAt(6*ms), chat("d")),
				send(waitForFinish),
				send(done, chat("e")),
			})
	}
	lat := map[string]time.Duration{"w": 2 * ms, "a": 3 * ms, "b": 3 * ms, "c": 7 * ms, "d": 1 * ms, "e": 2 * ms}
	// groups are the results heard per Step (what came since the last one,
	// by OnFinished or in the Step), then what came after the last Step.
	groups := func(log []string) []string {
		var out, cur []string
		for _, e := range log {
			if told, ok := strings.CutPrefix(e, "told "); ok {
				cur = append(cur, strings.Fields(strings.Trim(told, "[]"))...)
				continue
			}
			_, list, _ := strings.Cut(e, "[")
			cur = append(cur, strings.Fields(strings.TrimSuffix(list, "]"))...)
			out = append(out, strings.Join(cur, " "))
			cur = nil
		}
		return append(out, "after: "+strings.Join(cur, " "))
	}
	logs := map[bool]*listener{}
	for _, fis := range []bool{true, false} {
		h := newHarness(t, scenario())
		h.latencies(lat)
		if !fis {
			h.cfg.Capabilities = nil
		}
		if _, err := h.run(context.Background()); err != nil {
			t.Fatalf("FinishedInStep=%v: %v", fis, err)
		}
		logs[fis] = h.wl
	}
	wantMeasure := []string{
		"step @0s in=0 []", "step @3ms in=1 [a b]", "step @6ms in=1 [d]", "step @7ms in=0 [c]", "told [e]",
	}
	if d := gocmp.Diff(wantMeasure, logs[true].log[protocol.Measure]); d != "" {
		t.Errorf("FinishedInStep: measure calls (-want +got):\n%s", d)
	}
	if d := gocmp.Diff([]string{"step @0s in=0 []", "told [w]"}, logs[true].log[protocol.Warmup]); d != "" {
		t.Errorf("FinishedInStep: warmup calls (-want +got):\n%s", d)
	}
	wantMeasure = []string{
		"step @0s in=0 []", "told [a b]", "step @3ms in=1 []", "told [d]", "step @6ms in=1 []", "told [c]", "step @7ms in=0 []", "told [e]",
	}
	if d := gocmp.Diff(wantMeasure, logs[false].log[protocol.Measure]); d != "" {
		t.Errorf("OnFinished: measure calls (-want +got):\n%s", d)
	}
	for _, ph := range protocol.Phases {
		if d := gocmp.Diff(groups(logs[true].log[ph]), groups(logs[false].log[ph])); d != "" {
			t.Errorf("%v: results heard per Step differ (-FinishedInStep +OnFinished):\n%s", ph, d)
		}
	}
	if d := gocmp.Diff(logs[true].heard, logs[false].heard); d != "" {
		t.Errorf("results heard differ (-FinishedInStep +OnFinished):\n%s", d)
	}
}

// Results are what the transport measured, the finish as an offset in the
// phase; text only for a workload that wants it, tool calls only for one
// that also announced tool-calls (the capability gates them).
func TestResultsAndWantsText(t *testing.T) {
	t.Parallel()
	calls := []protocol.ToolCall{{ID: "call_0", Name: "get_weather", Arguments: `{"city":"Paris"}`}}
	for _, c := range []struct{ wants, tools bool }{{true, true}, {true, false}, {false, true}} {
		t.Run(fmt.Sprintf("WantsText=%v,tool-calls=%v", c.wants, c.tools), func(t *testing.T) {
			t.Parallel()
			wants := c.wants
			h := newHarness(t, script(nil, []protocol.StepResponse{send(wakeAt(4*ms), chat("a"), chat("f")), send(done)}))
			h.cfg.WantsText = wants
			if c.tools {
				h.cfg.Capabilities = append(slices.Clone(h.cfg.Capabilities), protocol.ToolCalls)
			}
			h.v.answer = func(o *Outgoing) reply {
				if o.ID == "f" {
					return reply{after: 3 * ms, fail: "HTTP 500: engine on fire"}
				}
				return reply{after: 2 * ms, text: "sunny", calls: calls}
			}
			if _, err := h.run(context.Background()); err != nil {
				t.Fatal(err)
			}
			a := protocol.Result{ID: "a", Phase: protocol.Measure, Success: true, TTFT: 0.001, Latency: 0.002,
				InputTokens: 10, OutputTokens: 2, CachedTokens: 8, Finish: 2 * ms}
			if wants {
				a.Text = "sunny"
			}
			if wants && c.tools {
				a.ToolCalls = calls
			}
			f := protocol.Result{ID: "f", Phase: protocol.Measure, Error: "HTTP 500: engine on fire", TTFT: -1, Latency: 0.003, Finish: 3 * ms}
			if d := gocmp.Diff([]protocol.Result{a, f}, h.wl.heard); d != "" {
				t.Errorf("results heard (-want +got):\n%s", d)
			}
			// The observer gets the whole outcome either way.
			if got := h.obs.finishedByID()["a"].Outcome; got.Text != "sunny" || len(got.ToolCalls) != 1 {
				t.Errorf("observer's outcome = %+v, want the text and tool calls", got)
			}
		})
	}
}

// One delivery carries at most BatchBytes of results (one larger result
// travels alone); the rest go in further calls, in order.
func TestResultBatches(t *testing.T) {
	t.Parallel()
	const batch = 400
	text := strings.Repeat("x", 100) // 166 bytes a result with a two-letter id
	for _, fis := range []bool{true, false} {
		t.Run(fmt.Sprint("FinishedInStep=", fis), func(t *testing.T) {
			t.Parallel()
			var reqs []protocol.Request
			for i := range 5 {
				reqs = append(reqs, chat(fmt.Sprint("r", i)))
			}
			h := newHarness(t, script(nil, []protocol.StepResponse{send(waitForFinish, reqs...), send(done, chat("big"))}))
			h.cfg.BatchBytes = batch
			if !fis {
				h.cfg.Capabilities = nil
			}
			h.v.answer = func(o *Outgoing) reply {
				if o.ID == "big" {
					return reply{after: ms, text: strings.Repeat("y", 2*batch)}
				}
				return reply{after: 5 * ms, text: text}
			}
			var sizes []int
			inner := h.wl.WorkloadService.(*fakeWorkload)
			size := func(rs []protocol.Result) {
				n := 0
				for i := range rs {
					n += resultSize(&rs[i])
				}
				if len(rs) > 0 {
					sizes = append(sizes, n)
				}
				if n > batch && len(rs) > 1 {
					t.Errorf("one delivery of %d results carries %d bytes, more than the %d allowed", len(rs), n, batch)
				}
			}
			inner.onFinished = func(_ context.Context, rs []protocol.Result) error { size(rs); return nil }
			step := inner.step
			inner.step = func(ctx context.Context, r protocol.StepRequest) (protocol.StepResponse, error) {
				size(r.Finished)
				return step(ctx, r)
			}
			if _, err := h.run(context.Background()); err != nil {
				t.Fatal(err)
			}
			want := []string{"step @0s in=0 []", "told [r0 r1]", "told [r2 r3]", "step @5ms in=0 [r4]", "told [big]"}
			if !fis {
				want = []string{"step @0s in=0 []", "told [r0 r1]", "told [r2 r3]", "told [r4]", "step @5ms in=0 []", "told [big]"}
			}
			if d := gocmp.Diff(want, h.wl.log[protocol.Measure]); d != "" {
				t.Errorf("measure calls (-want +got):\n%s", d)
			}
			if d := gocmp.Diff([]int{332, 332, 166, 2*batch + 3 + 64}, sizes); d != "" {
				t.Errorf("delivery sizes (-want +got):\n%s", d)
			}
		})
	}
}

func TestMaxSteps(t *testing.T) {
	t.Parallel()
	n := 0
	wl := &fakeWorkload{step: func(_ context.Context, r protocol.StepRequest) (protocol.StepResponse, error) {
		n++
		return send(wakeAt(r.Offset+ms), chat(fmt.Sprint("r", n))), nil
	}}
	h := newHarness(t, wl)
	h.cfg.MaxSteps = 3
	h.latencies(map[string]time.Duration{"r3": 20 * ms})
	res, err := h.run(context.Background())
	if err == nil || err.Error() != "warmup phase: more than 3 steps without finishing the phase" {
		t.Fatalf("Run = %v, want the MaxSteps error", err)
	}
	if n != 3 || res.WarmupSteps != n {
		t.Errorf("Step called %d times, Result.WarmupSteps %d; want 3 and 3 (it counts Step calls)", n, res.WarmupSteps)
	}
	if got := len(h.obs.finished); got != 3 {
		t.Errorf("%d of the 3 requests sent were recorded", got)
	}
	// r3, sent at 2 ms, takes 20 ms: the phase ends when it finished.
	if res.WarmupElapsed != 22*ms || res.Interrupted || !res.MeasureStart.IsZero() {
		t.Errorf("Result = %+v", res)
	}
}

// InFlight is this phase's requests sent and not yet delivered to the
// workload, whichever way results travel.
func TestInFlight(t *testing.T) {
	t.Parallel()
	for _, fis := range []bool{true, false} {
		t.Run(fmt.Sprint("FinishedInStep=", fis), func(t *testing.T) {
			t.Parallel()
			var h *harness
			inner := script(
				[]protocol.StepResponse{send(done, chat("w"))},
				[]protocol.StepResponse{
					send(wakeAt(3*ms), chat("a"), chat("b")),
					send(wakeAt(7 * ms)),
					send(wakeAt(12 * ms)),
				})
			check := &fakeWorkload{step: func(ctx context.Context, r protocol.StepRequest) (protocol.StepResponse, error) {
				if r.InFlight != h.v.inFlight() {
					t.Errorf("%v step at %v: InFlight %d, the transport has %d", r.Phase, r.Offset, r.InFlight, h.v.inFlight())
				}
				return inner.step(ctx, r)
			}}
			h = newHarness(t, check)
			if !fis {
				h.cfg.Capabilities = nil
			}
			h.latencies(map[string]time.Duration{"w": 50 * ms, "a": 5 * ms, "b": 10 * ms})
			if _, err := h.run(context.Background()); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range h.wl.steps {
				got = append(got, fmt.Sprintf("%v@%v in=%d", s.Phase, s.Offset, s.InFlight))
			}
			want := []string{"warmup@0s in=0", "measure@0s in=0", "measure@3ms in=2", "measure@7ms in=1", "measure@12ms in=0"}
			if d := gocmp.Diff(want, got); d != "" {
				t.Errorf("steps (-want +got):\n%s", d)
			}
		})
	}
}

// A cancelled context stops the stepping; what is in flight finishes
// (within DrainTimeout, then it is abandoned and recorded as failed), the
// workload is not told of it, and the run reports Interrupted, not an error.
func TestInterrupt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		warmup      []protocol.StepResponse
		measure     []protocol.StepResponse
		latency     map[string]time.Duration
		cancelAt    time.Duration
		drain       time.Duration
		wantFailed  []string // recorded as failed (abandoned)
		wantOK      []string
		wantDrain   []string
		wantElapsed time.Duration // of the phase interrupted
		wantPhase   protocol.Phase
	}{
		{name: "in-flight requests finish",
			measure:  []protocol.StepResponse{send(wakeAt(5*ms), chat("a"), chat("b")), send(done, chat("never"))},
			latency:  map[string]time.Duration{"a": 10 * ms, "b": 20 * ms},
			cancelAt: 4 * ms, wantOK: []string{"a", "b"}, wantDrain: []string{"2 in flight, abandoned false"},
			wantElapsed: 20 * ms, wantPhase: protocol.Measure},
		{name: "the drain timeout abandons the rest",
			measure:  []protocol.StepResponse{send(waitForFinish, chat("a"), chat("b"))},
			latency:  map[string]time.Duration{"a": -1, "b": 20 * ms},
			cancelAt: 4 * ms, drain: 50 * ms, wantOK: []string{"b"}, wantFailed: []string{"a"},
			wantDrain:   []string{"2 in flight, abandoned false", "1 in flight, abandoned true"},
			wantElapsed: 54 * ms, wantPhase: protocol.Measure},
		{name: "after Done too: the tail is bounded by the drain timeout",
			measure:  []protocol.StepResponse{send(done, chat("a"), chat("b"))},
			latency:  map[string]time.Duration{"a": -1, "b": -1},
			cancelAt: 5 * ms, drain: 10 * ms, wantFailed: []string{"a", "b"},
			wantDrain:   []string{"2 in flight, abandoned false", "2 in flight, abandoned true"},
			wantElapsed: 15 * ms, wantPhase: protocol.Measure},
		{name: "in warmup: the measured phase never starts",
			warmup:   []protocol.StepResponse{send(wakeAt(100*ms), chat("w"))},
			measure:  []protocol.StepResponse{send(done, chat("never"))},
			cancelAt: 5 * ms, wantOK: []string{"w"}, wantDrain: []string{"1 in flight, abandoned false"},
			wantElapsed: 10 * ms, wantPhase: protocol.Warmup},
		{name: "while idle",
			measure:  []protocol.StepResponse{send(wakeAt(time.Hour))},
			cancelAt: 5 * ms, wantElapsed: 5 * ms, wantPhase: protocol.Measure},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			inner := script(tc.warmup, tc.measure)
			inner.onFinished = func(context.Context, []protocol.Result) error {
				// As a plugin that got the terminal's Ctrl-C too: never surfaces.
				return errors.New("OnFinished: context canceled")
			}
			h := newHarness(t, inner)
			h.cfg.Capabilities = nil // results would be told by OnFinished
			h.cfg.DrainTimeout = tc.drain
			h.latencies(tc.latency)
			h.v.at(tc.cancelAt, cancel)
			res, err := h.run(ctx)
			if err != nil || !res.Interrupted {
				t.Fatalf("Run = %+v, %v; want interrupted, no error", res, err)
			}
			var ok, failed []string
			for _, f := range h.obs.finished {
				if f.Outcome.Success {
					ok = append(ok, f.Req.ID)
				} else {
					failed = append(failed, f.Req.ID)
					if f.Outcome.Error == "" {
						t.Errorf("%s recorded as failed without an error", f.Req.ID)
					}
				}
			}
			if d := gocmp.Diff(tc.wantOK, ok); d != "" {
				t.Errorf("recorded as successes (-want +got):\n%s", d)
			}
			if d := gocmp.Diff(tc.wantFailed, failed); d != "" {
				t.Errorf("recorded as failed (-want +got):\n%s", d)
			}
			if d := gocmp.Diff(tc.wantFailed, h.v.abandoned); d != "" {
				t.Errorf("abandoned (-want +got):\n%s", d)
			}
			if d := gocmp.Diff(tc.wantDrain, h.drain); d != "" {
				t.Errorf("OnDrain calls (-want +got):\n%s", d)
			}
			for _, s := range h.wl.steps {
				if s.Phase == tc.wantPhase && s.Offset >= tc.cancelAt {
					t.Errorf("stepped at %v, after the cancellation at %v", s.Offset, tc.cancelAt)
				}
			}
			if len(h.wl.heard) > 0 {
				t.Errorf("the workload was told of %v after the cancellation", ids(h.wl.heard))
			}
			elapsed := res.MeasureElapsed
			if tc.wantPhase == protocol.Warmup {
				elapsed = res.WarmupElapsed
				if !res.MeasureStart.IsZero() || h.wl.stepsOf(protocol.Measure) > 0 {
					t.Errorf("the measured phase ran after an interrupted warmup: %+v", res)
				}
			}
			if elapsed != tc.wantElapsed {
				t.Errorf("%v elapsed %v, want %v", tc.wantPhase, elapsed, tc.wantElapsed)
			}
		})
	}
}

// A Step that fails because the context was cancelled during it (Ctrl-C
// reaching the plugin) is an interruption, not an error.
func TestStepCancelledIsAnInterruption(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	h := newHarness(t, &fakeWorkload{step: func(ctx context.Context, r protocol.StepRequest) (protocol.StepResponse, error) {
		calls++
		if calls == 1 {
			return send(wakeAt(0), chat("a")), nil
		}
		cancel()
		return protocol.StepResponse{}, fmt.Errorf("workload plugin w: Step failed: %w", ctx.Err())
	}})
	res, err := h.run(ctx)
	if err != nil || !res.Interrupted {
		t.Fatalf("Run = %+v, %v; want interrupted", res, err)
	}
	if calls != 2 || len(h.obs.finished) != 1 || !h.obs.finished[0].Outcome.Success {
		t.Errorf("%d steps, finished %+v; want 2 steps and a drained", calls, h.obs.finished)
	}
}

// Errors from the workload or the observer stop the stepping; what is in
// flight is still drained and recorded; the first error is returned.
func TestErrorsStopAndDrain(t *testing.T) {
	t.Parallel()
	journalFull := errors.New("journal: no space left on device")
	tests := []struct {
		name       string
		step       func(n int) (protocol.StepResponse, error)
		onFinished error
		observer   func(*Finished[time.Duration]) error
		wantErr    string
		wantIs     error
		wantSteps  int
		wantRec    int
	}{
		{name: "step error",
			step: func(n int) (protocol.StepResponse, error) {
				if n == 2 {
					return protocol.StepResponse{}, errors.New("plugin crashed")
				}
				return send(wakeAt(0), chat("a"), chat("b")), nil
			},
			wantErr: "measure phase: step: plugin crashed", wantSteps: 2, wantRec: 2},
		{name: "OnFinished error",
			step: func(n int) (protocol.StepResponse, error) {
				return send(wakeAt(time.Duration(n)*20*ms), chat(fmt.Sprint("a", n)), chat(fmt.Sprint("b", n))), nil
			},
			onFinished: errors.New("boom"), wantErr: "measure phase: on finished: boom", wantSteps: 1, wantRec: 2},
		{name: "observer error",
			step: func(n int) (protocol.StepResponse, error) {
				return send(wakeAt(time.Duration(n)*5*ms), chat(fmt.Sprint("r", n))), nil
			},
			observer: func(f *Finished[time.Duration]) error {
				if f.Req.ID == "r1" {
					return journalFull
				}
				return nil
			},
			// r1 finishes at 10 ms: steps at 0 and 5 ms sent r1 and r2.
			wantIs: journalFull, wantSteps: 2, wantRec: 2},
		{name: "observer error after Done",
			step: func(int) (protocol.StepResponse, error) { return send(done, chat("a")), nil },
			observer: func(*Finished[time.Duration]) error {
				return journalFull
			},
			wantIs: journalFull, wantSteps: 1, wantRec: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := 0
			wl := &fakeWorkload{
				step: func(_ context.Context, r protocol.StepRequest) (protocol.StepResponse, error) {
					if r.Phase == protocol.Warmup {
						return send(done), nil
					}
					n++
					return tc.step(n)
				},
				onFinished: func(context.Context, []protocol.Result) error { return tc.onFinished },
			}
			h := newHarness(t, wl)
			h.cfg.Capabilities = nil
			h.obs.fail = tc.observer
			res, err := h.run(context.Background())
			if tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
				t.Errorf("Run = %v, want %q", err, tc.wantErr)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("Run = %v, want %v", err, tc.wantIs)
			}
			if res.Interrupted {
				t.Error("Interrupted after an error")
			}
			if n != tc.wantSteps {
				t.Errorf("%d measure steps, want %d", n, tc.wantSteps)
			}
			if len(h.obs.finished) != tc.wantRec || len(h.v.sent) != tc.wantRec {
				t.Errorf("%d sent, %d recorded, want %d of each", len(h.v.sent), len(h.obs.finished), tc.wantRec)
			}
			for _, f := range h.obs.finished {
				if !f.Outcome.Success {
					t.Errorf("%s was abandoned: the drain should have let it finish", f.Req.ID)
				}
			}
		})
	}
}

func limit(r protocol.Request, n int) protocol.Request {
	r.MaxInFlight = n
	return r
}

// A request with MaxInFlight is held until fewer requests of its phase
// are in flight, then sent the moment a slot frees (due then, unless it
// has its own schedule); held requests go in order, and count as in
// flight for the workload. A run that stops first never sends them.
func TestMaxInFlight(t *testing.T) {
	t.Parallel()
	type sent struct {
		At, Due time.Duration
	}
	tests := []struct {
		name       string
		measure    []protocol.StepResponse
		latency    map[string]time.Duration
		cancelAt   time.Duration // 0: none
		want       map[string]sent
		wantLog    []string
		wantUnsent int
		wantErr    string
	}{
		{name: "held until a slot frees, due then",
			measure: []protocol.StepResponse{send(done, limit(chat("a"), 2), limit(chat("b"), 2), limit(chat("c"), 2))},
			latency: map[string]time.Duration{"a": 5 * ms, "b": 8 * ms, "c": 3 * ms},
			want:    map[string]sent{"a": {0, 0}, "b": {0, 0}, "c": {5 * ms, 5 * ms}},
			wantLog: []string{"step @0s in=0 []", "told [a b c]"}},
		{name: "an explicit schedule is kept",
			measure: []protocol.StepResponse{send(done, limit(chat("a"), 1), limit(due(chat("b"), ms), 1))},
			latency: map[string]time.Duration{"a": 5 * ms},
			want:    map[string]sent{"a": {0, 0}, "b": {5 * ms, ms}},
			wantLog: []string{"step @0s in=0 []", "told [a b]"}},
		{name: "held requests count as in flight",
			measure: []protocol.StepResponse{send(wakeAt(2*ms), limit(chat("a"), 1), limit(chat("b"), 1), limit(chat("c"), 1)), send(waitForFinish)},
			latency: map[string]time.Duration{"a": 5 * ms, "b": 5 * ms, "c": 5 * ms},
			want:    map[string]sent{"a": {0, 0}, "b": {5 * ms, 5 * ms}, "c": {10 * ms, 10 * ms}},
			wantLog: []string{"step @0s in=0 []", "step @2ms in=3 []", "step @5ms in=2 [a]", "told [b c]"}},
		{name: "one that must wait holds back the later ones",
			measure: []protocol.StepResponse{send(done, limit(chat("a"), 1), limit(chat("b"), 1), limit(chat("c"), 5))},
			latency: map[string]time.Duration{"a": 5 * ms, "b": 5 * ms, "c": 5 * ms},
			want:    map[string]sent{"a": {0, 0}, "b": {5 * ms, 5 * ms}, "c": {5 * ms, 5 * ms}},
			wantLog: []string{"step @0s in=0 []", "told [a b c]"}},
		{name: "Ctrl-C: what is held is never sent",
			measure:  []protocol.StepResponse{send(done, limit(chat("a"), 1), limit(chat("b"), 1), limit(chat("c"), 1))},
			latency:  map[string]time.Duration{"a": 5 * ms},
			cancelAt: 3 * ms, want: map[string]sent{"a": {0, 0}}, wantLog: []string{"step @0s in=0 []"}, wantUnsent: 2},
		{name: "a refill once the requests handed over run low",
			measure: []protocol.StepResponse{
				send(belowN(3), limit(chat("a"), 1), limit(chat("b"), 1), limit(chat("c"), 1), limit(chat("d"), 1)),
				send(done, limit(chat("e"), 1)),
			},
			latency: map[string]time.Duration{"a": 5 * ms, "b": 5 * ms, "c": 5 * ms, "d": 5 * ms, "e": 5 * ms},
			// a at 0, b at 5, c at 10 (in flight 2: below 3), d at 15, e at 20.
			want:    map[string]sent{"a": {0, 0}, "b": {5 * ms, 5 * ms}, "c": {10 * ms, 10 * ms}, "d": {15 * ms, 15 * ms}, "e": {20 * ms, 20 * ms}},
			wantLog: []string{"step @0s in=0 []", "step @10ms in=2 [a b]", "told [c d e]"}},
		{name: "already below: stepped again at once",
			measure: []protocol.StepResponse{send(belowN(5), limit(chat("a"), 1)), send(done, limit(chat("b"), 1))},
			latency: map[string]time.Duration{"a": 5 * ms, "b": 5 * ms},
			want:    map[string]sent{"a": {0, 0}, "b": {5 * ms, 5 * ms}},
			wantLog: []string{"step @0s in=0 []", "step @0s in=1 []", "told [a b]"}},
		{name: "an error: what is held is never sent",
			measure: []protocol.StepResponse{send(wakeAt(ms), limit(chat("a"), 1), limit(chat("b"), 1)), send(wakeAt(ms), limit(chat("a"), 1))},
			latency: map[string]time.Duration{"a": 5 * ms},
			want:    map[string]sent{"a": {0, 0}}, wantLog: []string{"step @0s in=0 []", "step @1ms in=2 []"}, wantUnsent: 1,
			wantErr: `measure phase: workload w returned an invalid request: request "a": id: is not unique: an earlier request of this run has it`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h := newHarness(t, script(nil, tc.measure))
			h.latencies(tc.latency)
			if tc.cancelAt > 0 {
				h.v.at(tc.cancelAt, cancel)
			}
			res, err := h.run(ctx)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Run = %v", err)
			case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
				t.Fatalf("Run = %v, want %q", err, tc.wantErr)
			}
			if res.Interrupted != (tc.cancelAt > 0) {
				t.Errorf("Interrupted = %v", res.Interrupted)
			}
			got := map[string]sent{}
			for id, s := range h.v.sentTo() {
				got[id] = sent{At: s.at, Due: s.req.Due.Sub(h.obs.starts[protocol.Measure])}
			}
			if d := gocmp.Diff(tc.want, got); d != "" {
				t.Errorf("sent (-want +got):\n%s", d)
			}
			if d := gocmp.Diff(tc.wantLog, h.wl.log[protocol.Measure]); d != "" {
				t.Errorf("measure phase calls (-want +got):\n%s", d)
			}
			if res.Unsent != tc.wantUnsent {
				t.Errorf("Unsent = %d, want %d", res.Unsent, tc.wantUnsent)
			}
			if len(h.obs.finished) != len(h.v.sent) {
				t.Errorf("%d finished of %d sent", len(h.obs.finished), len(h.v.sent))
			}
		})
	}
}

// A request handed over before it is due is held and sent exactly when
// due, with no Step in between; it counts as in flight for the workload,
// the phase waits for it, and a run that stops first never sends it.
// Config.MaxConcurrency caps every request of a phase; one due while the
// cap is reached waits for a slot, and keeps its due time (dispatch lag).
func TestLookAheadAndMaxConcurrency(t *testing.T) {
	t.Parallel()
	type sent struct {
		At, Due time.Duration
	}
	tests := []struct {
		name       string
		maxConc    int
		measure    []protocol.StepResponse
		latency    map[string]time.Duration
		cancelAt   time.Duration // 0: none
		want       map[string]sent
		wantLog    []string
		wantUnsent int
	}{
		{name: "each sent when due, in due order",
			measure: []protocol.StepResponse{send(done, due(chat("a"), 10*ms), due(chat("b"), 30*ms), due(chat("c"), 20*ms), due(chat("d"), 20*ms))},
			want:    map[string]sent{"a": {10 * ms, 10 * ms}, "b": {30 * ms, 30 * ms}, "c": {20 * ms, 20 * ms}, "d": {20 * ms, 20 * ms}},
			wantLog: []string{"step @0s in=0 []", "told [a c d b]"}},
		{name: "counted in flight until they finish",
			measure: []protocol.StepResponse{send(wakeAt(5*ms), due(chat("a"), 10*ms), due(chat("b"), 20*ms)), send(waitForFinish)},
			want:    map[string]sent{"a": {10 * ms, 10 * ms}, "b": {20 * ms, 20 * ms}},
			wantLog: []string{"step @0s in=0 []", "step @5ms in=2 []", "step @20ms in=1 [a]", "told [b]"}},
		{name: "Ctrl-C: what is not due yet is never sent",
			measure:  []protocol.StepResponse{send(done, due(chat("a"), 0), due(chat("b"), 10*ms), due(chat("c"), 20*ms))},
			cancelAt: 5 * ms,
			want:     map[string]sent{"a": {0, 0}}, wantLog: []string{"step @0s in=0 []"}, wantUnsent: 2},
		{name: "max concurrency: a request due while the cap is reached waits, late",
			maxConc: 2,
			measure: []protocol.StepResponse{send(done, due(chat("a"), 0), due(chat("b"), 0), due(chat("c"), ms), due(chat("d"), 2*ms))},
			latency: map[string]time.Duration{"a": 5 * ms, "b": 7 * ms},
			want:    map[string]sent{"a": {0, 0}, "b": {0, 0}, "c": {5 * ms, ms}, "d": {7 * ms, 2 * ms}},
			wantLog: []string{"step @0s in=0 []", "told [a b c d]"}},
		{name: "max concurrency: due later than the slot frees",
			maxConc: 1,
			measure: []protocol.StepResponse{send(done, due(chat("a"), 0), due(chat("b"), 20*ms), due(chat("c"), 25*ms))},
			latency: map[string]time.Duration{"a": 30 * ms},
			want:    map[string]sent{"a": {0, 0}, "b": {30 * ms, 20 * ms}, "c": {40 * ms, 25 * ms}},
			wantLog: []string{"step @0s in=0 []", "told [a b c]"}},
		{name: "max concurrency tightens MaxInFlight and caps plain requests",
			maxConc: 1,
			measure: []protocol.StepResponse{send(done, limit(chat("a"), 5), limit(chat("b"), 5), chat("c"))},
			want:    map[string]sent{"a": {0, 0}, "b": {10 * ms, 10 * ms}, "c": {20 * ms, 20 * ms}},
			wantLog: []string{"step @0s in=0 []", "told [a b c]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h := newHarness(t, script(nil, tc.measure))
			h.cfg.MaxConcurrency = tc.maxConc
			h.latencies(tc.latency)
			if tc.cancelAt > 0 {
				h.v.at(tc.cancelAt, cancel)
			}
			res, err := h.run(ctx)
			if err != nil {
				t.Fatalf("Run = %v", err)
			}
			if res.Interrupted != (tc.cancelAt > 0) {
				t.Errorf("Interrupted = %v", res.Interrupted)
			}
			got := map[string]sent{}
			for id, s := range h.v.sentTo() {
				got[id] = sent{At: s.at, Due: s.req.Due.Sub(h.obs.starts[protocol.Measure])}
			}
			if d := gocmp.Diff(tc.want, got); d != "" {
				t.Errorf("sent (-want +got):\n%s", d)
			}
			if d := gocmp.Diff(tc.wantLog, h.wl.log[protocol.Measure]); d != "" {
				t.Errorf("measure phase calls (-want +got):\n%s", d)
			}
			if res.Unsent != tc.wantUnsent {
				t.Errorf("Unsent = %d, want %d", res.Unsent, tc.wantUnsent)
			}
			if len(h.obs.finished) != len(h.v.sent) {
				t.Errorf("%d finished of %d sent", len(h.obs.finished), len(h.v.sent))
			}
		})
	}
}

// BeforePhase runs before each phase, after the one before it ended; the
// phase starts when it returns (here the measured phase waits 7 ms: its
// clock starts then). An error stops the run before that phase.
func TestBeforePhase(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(
		[]protocol.StepResponse{send(done, chat("w0"))},
		[]protocol.StepResponse{send(done, due(chat("m0"), 2*ms))}))
	h.latencies(map[string]time.Duration{"w0": 5 * ms, "m0": 4 * ms})
	var calls []string
	h.cfg.BeforePhase = func(_ context.Context, ph protocol.Phase) error {
		calls = append(calls, fmt.Sprintf("%v@%v", ph, h.v.now))
		if ph == protocol.Measure {
			h.v.now += 7 * ms
		}
		return nil
	}
	res, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d := gocmp.Diff([]string{"warmup@0s", "measure@5ms"}, calls); d != "" {
		t.Errorf("BeforePhase calls (-want +got):\n%s", d)
	}
	if want := h.v.base.Add(12 * ms); !res.MeasureStart.Equal(want) || h.v.sentTo()["m0"].at != 14*ms {
		t.Errorf("measure started %v, m0 sent at %v; want base+12ms and 14ms", res.MeasureStart.Sub(h.v.base), h.v.sentTo()["m0"].at)
	}

	h = newHarness(t, script(
		[]protocol.StepResponse{send(done, chat("w0"))},
		[]protocol.StepResponse{send(done, chat("m0"))}))
	h.cfg.BeforePhase = func(_ context.Context, ph protocol.Phase) error {
		if ph == protocol.Measure {
			return errors.New("shard 2/3 left")
		}
		return nil
	}
	_, err = h.run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "before the measure phase: shard 2/3 left") {
		t.Errorf("err = %v", err)
	}
	if ids := h.v.sentIDs(); !slices.Equal(ids, []string{"w0"}) {
		t.Errorf("sent %v, want only the warmup's w0", ids)
	}
}
