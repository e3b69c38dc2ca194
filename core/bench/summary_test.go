package bench

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/merge"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/stats"
)

// summaryRecords are a warmup and two measured answers, 10 ms apart per chunk.
func summaryRecords(start time.Time) []record.Record {
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	warm := record.Record{Phase: record.Warmup, RequestID: "w", Success: true, TTFT: 0.1, Latency: 0.1, OutputTokens: 1,
		InputTokens: 1000, Scheduled: at(0), Submit: at(0), FirstToken: at(100), Finish: at(100), ChunkOffsetsUs: []int64{100_000}}
	a := record.Record{Phase: record.Measure, RequestID: "a", Success: true, TTFT: 0.1, Latency: 0.13, OutputTokens: 4,
		InputTokens: 1000, CachedTokens: 900, Scheduled: at(200), Submit: at(200), FirstToken: at(300), Finish: at(330),
		ChunkOffsetsUs: []int64{100_000, 110_000, 120_000, 130_000}}
	b := a
	b.RequestID, b.CachedTokens = "b", 0
	return []record.Record{warm, a, b}
}

// The summary takes its percentiles from the run's recorded
// configuration, at a run's end and on re-export alike, and counts the
// warmup in the cache block.
func TestSummaryPercentilesFromTheRunConfig(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		config string
		want   []float64
	}{
		{"configured", `{"model":"m","percentiles":"50,99.9"}`, []float64{50, 99.9}},
		{"not configured: the default", `{"model":"m"}`, []float64{50, 90, 99}},
		{"no configuration", ``, []float64{50, 90, 99}},
		{"unreadable: the default", `{"percentiles":"zero"}`, []float64{50, 90, 99}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			run := record.Run{ID: "r1", Workload: "w", Started: start}
			if tt.config != "" {
				run.Config = json.RawMessage(tt.config)
			}
			path := filepath.Join(t.TempDir(), record.JournalName)
			j, err := record.CreateJournal(path, run)
			if err != nil {
				t.Fatal(err)
			}
			recs := summaryRecords(start)
			for i := range recs {
				if err := j.Append(&recs[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := j.Close(nil); err != nil {
				t.Fatal(err)
			}

			f, hasSchedule, err := finalFromJournal(path, start.Add(200*time.Millisecond), 2)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f.Percentiles, tt.want) || hasSchedule {
				t.Errorf("percentiles %v, has schedule %v; want %v, false", f.Percentiles, hasSchedule, tt.want)
			}
			if f.TotalRequests != 2 || f.ITL.N != 6 || f.ITL.Median != 10 || f.TPOT.Mean != 10 {
				t.Errorf("total %d, ITL gaps %d median %v, TPOT mean %v; want 2, 6, 10, 10", f.TotalRequests, f.ITL.N, f.ITL.Median, f.TPOT.Mean)
			}
			want := struct{ Warmup, Measure stats.Cache }{
				Warmup:  stats.Cache{Requests: 1, PromptTokens: 1000},
				Measure: stats.Cache{Requests: 2, PromptTokens: 2000, CachedTokens: 900, RequestsWithCache: 1},
			}
			if diff := cmp.Diff(want, f.Cache); diff != "" {
				t.Errorf("cache (-want +got):\n%s", diff)
			}

			// A re-export of the journal (no summary line) computes the same.
			c, sum, computed, err := merge.ReadJournal(path)
			if err != nil || !computed {
				t.Fatalf("ReadJournal: computed %v, %v", computed, err)
			}
			var doc struct {
				Metrics struct {
					Percentiles []float64          `json:"percentiles"`
					ITL         map[string]float64 `json:"itl_ms"`
				} `json:"metrics"`
				Cache map[string]map[string]any `json:"cache"`
			}
			if err := json.Unmarshal(sum.JSON, &doc); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(doc.Metrics.Percentiles, tt.want) || doc.Metrics.ITL["count"] != 6 || len(c.Records) != 3 {
				t.Errorf("re-export: percentiles %v, ITL %v, %d records", doc.Metrics.Percentiles, doc.Metrics.ITL, len(c.Records))
			}
			if got := doc.Cache["warmup"]["requests"]; got != 1.0 {
				t.Errorf("re-export: cache.warmup.requests = %v, want 1", got)
			}
		})
	}
}

// The requested rate (the journal's header) and the SLO (the recorded
// configuration) reach the summary at a run's end and on re-export alike.
func TestSummaryLoadAndGoodputFromTheJournal(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	run := record.Run{ID: "r1", Workload: "w", Started: start, RequestedRate: 25,
		Config: json.RawMessage(`{"model":"m","slo":"ttft:150,itl:5"}`)}
	path := filepath.Join(t.TempDir(), record.JournalName)
	j, err := record.CreateJournal(path, run)
	if err != nil {
		t.Fatal(err)
	}
	recs := summaryRecords(start)
	for i := range recs {
		if err := j.Append(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(nil); err != nil {
		t.Fatal(err)
	}
	f, _, err := finalFromJournal(path, start.Add(200*time.Millisecond), 2)
	if err != nil {
		t.Fatal(err)
	}
	// Both answers: TTFT 100 ms (meets 150), gaps of 10 ms (miss 5).
	if f.Load.RequestedRate != 25 || f.Goodput.SLO != (stats.SLO{TTFT: 150, ITL: 5}) || f.Goodput.Good != 0 ||
		f.Goodput.TTFT != 1 || f.Goodput.ITL != 0 {
		t.Errorf("load %+v goodput %+v: want requested 25, ttft:150,itl:5, none good, TTFT attainment 1, ITL 0", f.Load, f.Goodput)
	}
	_, sum, _, err := merge.ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Load    map[string]any `json:"load"`
		Goodput map[string]any `json:"goodput"`
	}
	if err := json.Unmarshal(sum.JSON, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Load["requested_rate"] != 25.0 || doc.Goodput["good_requests"] != 0.0 {
		t.Errorf("re-export: load %v goodput %v", doc.Load, doc.Goodput)
	}
}
