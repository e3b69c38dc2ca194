package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/abort"
	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// These tests run Execute with the abort policy on: each stops a run for
// one of its reasons and checks that dispatch stopped, what finished was
// kept, and the summary says aborted and why.

// oneByOne is a closed-loop workload: n measured requests m0…m(n-1), the
// next sent only once the previous one finished, so where a run stops
// is exactly the request that decided it.
func oneByOne(n int) *fakeWorkload {
	var next int
	return &fakeWorkload{step: func(r protocol.StepRequest) (protocol.StepResponse, error) {
		if r.Phase == protocol.Warmup || next == n {
			return protocol.StepResponse{Next: nextDone}, nil
		}
		next++
		return protocol.StepResponse{Requests: []protocol.Request{chat(fmt.Sprintf("m%d", next-1), nil)}, Next: waitForFinish}, nil
	}}
}

// funcSender answers request n (from 1, in sending order) with answer(n).
type funcSender struct {
	answer func(ctx context.Context, n int, req engine.Request) engine.Result
	n      atomic.Int64
}

func (s *funcSender) Send(ctx context.Context, req engine.Request) engine.Result {
	return s.answer(ctx, int(s.n.Add(1)), req)
}

func (s *funcSender) sent() int { return int(s.n.Load()) }

func succeed(req engine.Request) engine.Result {
	now := time.Now()
	return engine.Result{ID: req.ID, Success: true, Submit: now, FirstToken: now, LastToken: now, Finish: now,
		InputTokens: 3, OutputTokens: 1, Chunks: 1, Text: "ok"}
}

func fail(req engine.Request, msg string) engine.Result {
	now := time.Now()
	return engine.Result{ID: req.ID, Submit: now, Finish: now, Error: msg}
}

const refused = `Post "http://127.0.0.1:9/v1/chat/completions": dial tcp 127.0.0.1:9: connect: connection refused`

// summaryRun is the run block of bench_summary.json.
type summaryRun struct {
	Status   string  `json:"status"`
	Reason   *string `json:"reason"`
	Planned  *int    `json:"planned_requests"`
	Sent     int     `json:"sent_requests"`
	Finished int     `json:"finished_requests"`
}

func readSummaryRun(t *testing.T, p Plan) summaryRun {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p.Report.OutputDir, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Run summaryRun `json:"run"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("bench_summary.json: %v\n%s", err, b)
	}
	return d.Run
}

func TestAbortAfterConsecutiveConnectionFailures(t *testing.T) {
	t.Parallel()
	// Two successes, then the engine is gone: the 5th refused connection
	// in a row stops the run; the successes between do reset the count.
	snd := &funcSender{answer: func(_ context.Context, n int, req engine.Request) engine.Result {
		if n <= 2 || n == 5 {
			return succeed(req)
		}
		return fail(req, refused)
	}}
	p, stdout := plan(t, oneByOne(100), snd)
	p.Abort = abort.Policy{ConnectionFailures: 5}
	p.Report.ExportJSON = true
	p.Planned = 100
	res, err := Execute(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	// Requests 3, 4 refused; 5 succeeded; 6…10 refused: the 10th aborts.
	if got := snd.sent(); got != 10 {
		t.Errorf("sent %d requests, want 10 (dispatch stops at the abort)", got)
	}
	if res.Status != record.Aborted || res.Abort == nil || res.Abort.Title != "engine unreachable" ||
		!strings.Contains(res.Abort.Reason, "5 requests in a row got no response") {
		t.Fatalf("status %q abort %+v", res.Status, res.Abort)
	}
	if !errors.Is(res.Err, res.Abort) {
		t.Errorf("Result.Err %v does not hold the abort", res.Err)
	}
	if n := len(readJournal(t, p).Records); n != 10 {
		t.Errorf("journal has %d records, want all 10 finished", n)
	}
	sr := readSummaryRun(t, p)
	if sr.Status != "aborted" || sr.Reason == nil || !strings.Contains(*sr.Reason, "engine unreachable") ||
		sr.Planned == nil || *sr.Planned != 100 || sr.Sent != 10 || sr.Finished != 10 {
		t.Errorf("summary run block %+v", sr)
	}
	if !strings.Contains(stdout.String(), "aborted: engine unreachable") {
		t.Errorf("terminal header does not say aborted:\n%s", stdout)
	}
}

func TestFailureRateWindow(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		fails     func(n int) bool
		wantSent  int
		wantAbort bool
	}{
		// 10 successes, then every request fails: the window of 10
		// holds 5 failures at the 15th.
		"all failing after a while": {func(n int) bool { return n > 10 }, 15, true},
		// Every other request fails: 50% never reaches 60%.
		"half failing stays under the rate": {func(n int) bool { return n%2 == 0 }, 40, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			snd := &funcSender{answer: func(_ context.Context, n int, req engine.Request) engine.Result {
				if tc.fails(n) {
					return fail(req, "HTTP 500: engine on fire")
				}
				return succeed(req)
			}}
			p, _ := plan(t, oneByOne(40), snd)
			p.Abort = abort.Policy{FailureRate: 0.6, Window: 10}
			if tc.wantAbort {
				p.Abort.FailureRate = 0.5
			}
			res, err := Execute(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if got := snd.sent(); got != tc.wantSent {
				t.Errorf("sent %d, want %d", got, tc.wantSent)
			}
			if !tc.wantAbort {
				if res.Status != record.Completed || res.Abort != nil {
					t.Errorf("status %q abort %+v, want completed", res.Status, res.Abort)
				}
				return
			}
			if res.Status != record.Aborted || res.Abort.Title != "too many failures" ||
				!strings.Contains(res.Abort.Reason, "5 of the last 10 requests failed") || !strings.Contains(res.Abort.Reason, "5× HTTP 500") {
				t.Errorf("status %q abort %+v", res.Status, res.Abort)
			}
		})
	}
}

// An engine that stops answering while no request finishes (every one
// hangs) is noticed by the health probe alone.
func TestHealthProbeAborts(t *testing.T) {
	t.Parallel()
	var probes atomic.Int64
	healthy := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			http.NotFound(w, r)
			return
		}
		if probes.Add(1) > 2 {
			http.Error(w, "engine dead", http.StatusServiceUnavailable)
			return
		}
		if probes.Load() == 2 {
			close(healthy)
		}
	}))
	t.Cleanup(srv.Close)
	snd := &funcSender{answer: func(ctx context.Context, _ int, req engine.Request) engine.Result {
		r := fail(req, "")
		<-ctx.Done() // hangs until lmbench gives up on it
		r.Finish, r.Error = time.Now(), ctx.Err().Error()
		return r
	}}
	measure := []protocol.Request{chat("m0", nil), chat("m1", nil), chat("m2", nil)}
	p, _ := plan(t, batches(nil, measure), snd)
	p.DrainTimeout = 50 * time.Millisecond
	p.Abort = abort.Policy{Health: abort.HealthProbe{BaseURL: srv.URL + "/v1", Interval: 10 * time.Millisecond}}
	p.Report.ExportJSON = true
	res, err := Execute(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-healthy:
	default:
		t.Fatal("the run ended before the engine was probed healthy twice")
	}
	if res.Status != record.Aborted || res.Abort == nil || res.Abort.Title != "engine unreachable" ||
		!strings.Contains(res.Abort.Reason, "3 health probes in a row failed") || !strings.Contains(res.Abort.Reason, "HTTP 503") {
		t.Fatalf("status %q abort %+v", res.Status, res.Abort)
	}
	// The hung requests were abandoned by the drain and recorded failed.
	recs := readJournal(t, p).Records
	if len(recs) != 3 || slices.ContainsFunc(recs, func(r record.Record) bool { return r.Success }) {
		t.Errorf("journal %+v, want the 3 requests, failed", recs)
	}
	if sr := readSummaryRun(t, p); sr.Status != "aborted" || sr.Sent != 3 || sr.Finished != 3 {
		t.Errorf("summary run block %+v", sr)
	}
}

// A health endpoint that fails while requests keep succeeding (an
// overloaded /health) does not stop the run: the requests show the engine
// alive. Request k answers once the k-th failed probe is in, so a success
// lands between every two failed probes.
func TestHealthProbeFailingWhileRequestsSucceed(t *testing.T) {
	t.Parallel()
	var probes atomic.Int64
	probed := make(chan struct{}, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			http.NotFound(w, r)
			return
		}
		if probes.Add(1) == 1 {
			return // the first probe chooses /health
		}
		http.Error(w, "health endpoint overloaded", http.StatusServiceUnavailable)
		select {
		case probed <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(srv.Close)
	var mu sync.Mutex
	snd := &funcSender{answer: func(ctx context.Context, n int, req engine.Request) engine.Result {
		mu.Lock() // one at a time: each waits for a fresh failed probe
		defer mu.Unlock()
		select {
		case <-probed:
		case <-ctx.Done():
			return fail(req, ctx.Err().Error())
		}
		return succeed(req)
	}}
	var measure []protocol.Request
	for i := range 8 {
		measure = append(measure, chat(fmt.Sprintf("m%d", i), nil))
	}
	p, _ := plan(t, batches(nil, measure), snd)
	// Three failed probes 50 ms apart would abort; a success comes with
	// every one of them.
	p.Abort = abort.Policy{Health: abort.HealthProbe{BaseURL: srv.URL + "/v1", Interval: 50 * time.Millisecond}}
	p.Report.ExportJSON = true
	res, err := Execute(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != record.Completed || res.Abort != nil || res.Final.SuccessfulRequests != 8 {
		t.Fatalf("status %q abort %+v, %d successful: want completed, all 8", res.Status, res.Abort, res.Final.SuccessfulRequests)
	}
	if n := probes.Load(); n < 9 {
		t.Errorf("%d probes, want at least 9 (one to choose /health, one failed per request): the test proves nothing", n)
	}
}

func TestWarmupFailureStopsBeforeMeasuring(t *testing.T) {
	t.Parallel()
	warmup := []protocol.Request{chat("w0", nil), chat("w1", nil), chat("w2", nil)}
	measure := []protocol.Request{chat("m0", nil), chat("m1", nil)}
	snd := &fakeSender{outcomes: map[string]answer{"w1": {fail: true}}}
	p, stdout := plan(t, batches(warmup, measure), snd)
	p.Report.ExportJSON = true
	res, err := Execute(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range snd.sent() {
		if strings.HasPrefix(r.ID, "m") {
			t.Errorf("measured request %s was sent after a failed warmup", r.ID)
		}
	}
	if res.Status != record.Aborted || res.Abort == nil || res.Abort.Title != "warmup failed" ||
		!strings.Contains(res.Abort.Reason, "1 warmup request failed") || !strings.Contains(res.Abort.Reason, "w1 (HTTP 500: engine on fire)") ||
		!strings.Contains(res.Abort.Reason, "--allow-warmup-failures") {
		t.Fatalf("status %q abort %+v", res.Status, res.Abort)
	}
	// Every warmup request that was sent is journalled, the failure
	// with its error.
	recs := readJournal(t, p).Records
	if len(recs) != 3 {
		t.Errorf("journal has %d records, want the 3 warmup requests", len(recs))
	}
	fb := readFailures(t, p)
	if fb.Warmup.Requests != 3 || fb.Warmup.Failed != 1 || fb.Measure.Requests != 0 {
		t.Errorf("failures %+v", fb)
	}
	if !strings.Contains(stdout.String(), "aborted: warmup failed") || !strings.Contains(stdout.String(), "Warmup failed:") {
		t.Errorf("terminal summary:\n%s", stdout)
	}
}

func TestAllowWarmupFailuresMeasuresAnyway(t *testing.T) {
	t.Parallel()
	warmup := []protocol.Request{chat("w0", nil), chat("w1", nil)}
	measure := []protocol.Request{chat("m0", nil), chat("m1", nil)}
	snd := &fakeSender{outcomes: map[string]answer{"w0": {fail: true}}}
	p, _ := plan(t, batches(warmup, measure), snd)
	p.Abort.AllowWarmupFailures = true
	p.Report.ExportJSON = true
	res, err := Execute(context.Background(), p)
	if err != nil || res.Status != record.Completed {
		t.Fatalf("status %q err %v %v", res.Status, err, res.Err)
	}
	if len(snd.sent()) != 4 {
		t.Errorf("sent %d requests, want the 2 warmup and the 2 measured", len(snd.sent()))
	}
	if fb := readFailures(t, p); fb.Warmup.Failed != 1 || fb.Measure.Requests != 2 || fb.Measure.Failed != 0 {
		t.Errorf("failures %+v: the warmup failure must be counted either way", fb)
	}
}

// failingJournal fails every Append after its first ok records, as a
// full disk does.
type failingJournal struct {
	journalWriter
	ok int
	mu sync.Mutex
	n  int
}

var errDiskFull = errors.New("write bench_journal.jsonl: no space left on device")

func (j *failingJournal) Append(recs ...*record.Record) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.n+len(recs) > j.ok {
		return errDiskFull
	}
	j.n += len(recs)
	return j.journalWriter.Append(recs...)
}

func TestJournalFailureKeepsEveryFinishedRecord(t *testing.T) {
	t.Parallel()
	// 8 requests in flight at once; the journal fails at the 4th record:
	// the 5 others are already on their way and must be kept too.
	var measure []protocol.Request
	for i := range 8 {
		measure = append(measure, chat(fmt.Sprintf("m%d", i), nil))
	}
	exp := &fakeExporter{}
	p, _ := plan(t, batches(nil, measure), &fakeSender{}, exp)
	p.journalHook = func(j journalWriter) journalWriter { return &failingJournal{journalWriter: j, ok: 3} }
	fallback := t.TempDir()
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p.fallbackDirs = []string{filepath.Join(notADir, "dir"), fallback} // the first cannot take it
	p.Report.ExportJSON = true
	res, err := Execute(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != record.Aborted || res.Abort == nil || res.Abort.Title != "journal write failed" ||
		!strings.Contains(res.Abort.Reason, "no space left on device") || !strings.Contains(res.Abort.Reason, fallback) {
		t.Fatalf("status %q abort %+v", res.Status, res.Abort)
	}
	if filepath.Dir(res.JournalPath) != fallback {
		t.Fatalf("JournalPath %s, want one in %s", res.JournalPath, fallback)
	}
	c, err := record.ReadJournal(res.JournalPath)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range c.Records {
		ids = append(ids, r.RequestID)
	}
	slices.Sort(ids)
	want := []string{"m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("fallback journal's requests (-want +got):\n%s", diff)
	}
	if c.Summary == nil || c.Summary.Status != record.Aborted || !strings.Contains(c.Summary.Reason, "journal write failed") {
		t.Errorf("fallback journal's summary %+v", c.Summary)
	}
	if got := len(exp.records); got != 8 {
		t.Errorf("the exporter got %d records, want 8", got)
	}
	if sr := readSummaryRun(t, p); sr.Status != "aborted" || sr.Finished != 8 {
		t.Errorf("summary run block %+v", sr)
	}
}

// phaseFailures is bench_summary.json's failures block.
type phaseFailures struct {
	Warmup, Measure struct {
		Requests int `json:"requests"`
		Failed   int `json:"failed"`
		Kinds    []struct {
			Kind           string `json:"kind"`
			Label          string `json:"label"`
			Connection     bool   `json:"connection"`
			Count          int    `json:"count"`
			Example        string `json:"example"`
			ExampleRequest string `json:"example_request_id"`
		} `json:"kinds"`
	}
}

func readFailures(t *testing.T, p Plan) phaseFailures {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p.Report.OutputDir, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Failures phaseFailures `json:"failures"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d.Failures
}

func TestFailureBreakdownPerPhase(t *testing.T) {
	t.Parallel()
	warmup := []protocol.Request{chat("w0", nil), chat("w1", nil)}
	measure := []protocol.Request{chat("m0", nil), chat("m1", nil), chat("m2", nil), chat("m3", nil), chat("m4", nil)}
	errs := map[string]string{
		"w1": "HTTP 503: overloaded",
		"m1": refused, "m3": refused,
		"m4": "HTTP 500: engine on fire",
	}
	snd := &funcSender{answer: func(_ context.Context, _ int, req engine.Request) engine.Result {
		if msg, ok := errs[req.ID]; ok {
			return fail(req, msg)
		}
		return succeed(req)
	}}
	p, stdout := plan(t, batches(warmup, measure), snd)
	p.Abort.AllowWarmupFailures = true // and no other policy: the run goes to the end
	p.Report.ExportJSON = true
	res, err := Execute(context.Background(), p)
	if err != nil || res.Status != record.Completed {
		t.Fatalf("status %q err %v %v", res.Status, err, res.Err)
	}
	fb := readFailures(t, p)
	if fb.Warmup.Requests != 2 || fb.Warmup.Failed != 1 || len(fb.Warmup.Kinds) != 1 ||
		fb.Warmup.Kinds[0].Count != 1 || fb.Warmup.Kinds[0].ExampleRequest != "w1" || !strings.Contains(fb.Warmup.Kinds[0].Label, "503") {
		t.Errorf("warmup failures %+v", fb.Warmup)
	}
	counts := map[string]int{}
	for _, k := range fb.Measure.Kinds {
		counts[k.Label] = k.Count
		if k.Example == "" || k.ExampleRequest == "" || errs[k.ExampleRequest] != k.Example {
			t.Errorf("kind %+v: the example is not one of its requests' errors", k)
		}
		if k.Connection != strings.Contains(k.Example, "connection refused") {
			t.Errorf("kind %+v: connection %v", k, k.Connection)
		}
	}
	if fb.Measure.Requests != 5 || fb.Measure.Failed != 3 || len(counts) != 2 || counts["connection refused"] != 2 {
		t.Errorf("measured failures %+v (counts %v)", fb.Measure, counts)
	}
	out := stdout.String()
	for _, want := range []string{"Warmup failed:                                    1 of 2", "Measured failed:                                  3 of 5", "connection refused:"} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal summary lacks %q:\n%s", want, out)
		}
	}
	// The kind's example is one of its requests (which one depends on the
	// order they failed in).
	if !strings.Contains(out, "e.g. m1: "+refused[:40]) && !strings.Contains(out, "e.g. m3: "+refused[:40]) {
		t.Errorf("terminal summary lacks an example of the refused requests (m1 or m3):\n%s", out)
	}
}
