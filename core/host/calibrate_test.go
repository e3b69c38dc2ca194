package host

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

	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/record"
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
	var m calibrationSamples
	for range 2 {
		if err := replay(context.Background(), s, plan, &m); err != nil {
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
