package merge

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/stats"
)

var mergeT0 = time.Unix(1_796_140_000, 0)

// shardRec is a measured request submitted at at (seconds from t0) with
// TTFT ttft seconds, 10 input and 5 output tokens.
func shardRec(id string, at, ttft float64) record.Record {
	sub := mergeT0.Add(time.Duration(at * float64(time.Second)))
	return record.Record{Phase: record.Measure, RequestID: id, Success: true, TTFT: ttft, Latency: ttft + 0.05,
		InputTokens: 10, OutputTokens: 5, Tags: map[string]string{"i": id},
		Scheduled: sub, ExplicitSchedule: true, Submit: sub, FirstToken: sub.Add(time.Duration(ttft * float64(time.Second))),
		Finish: sub.Add(time.Duration((ttft + 0.05) * float64(time.Second)))}
}

type shardSpec struct {
	index, count int
	runID, hash  string
	offset       time.Duration // the shard's clock offset to the reference
	status       record.Status // "" : killed, no summary
	recs         []record.Record
	config       string // the recorded configuration ("": the default one)
}

// writeShard writes a shard's journal whose timestamps are on its own
// clock: the reference time minus its offset.
func writeShard(t testing.TB, dir string, s shardSpec) string {
	t.Helper()
	path := filepath.Join(dir, record.JournalName)
	sh := &record.Shard{Index: s.index, Count: s.count, RunID: s.runID, ConfigHash: s.hash, RequestedRate: 30,
		Clock: record.Clock{Reference: "barrier http://b", Offset: s.offset, RTT: time.Millisecond, Samples: 8}}
	cfg := `{"seed":1,"percentiles":"50,90"}`
	if s.config != "" {
		cfg = s.config
	}
	run := record.Run{ID: s.runID, Workload: "w", Model: "m", TagKeys: []string{"i"}, Started: mergeT0.Add(-s.offset),
		Config: json.RawMessage(cfg), RequestedRate: 10, Shard: sh}
	j, err := record.CreateJournal(path, run)
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.recs {
		r := s.recs[i]
		r.RunID = s.runID
		r.Scheduled, r.Submit = r.Scheduled.Add(-s.offset), r.Submit.Add(-s.offset)
		r.FirstToken, r.Finish = r.FirstToken.Add(-s.offset), r.Finish.Add(-s.offset)
		if err := j.Append(&r); err != nil {
			t.Fatal(err)
		}
	}
	var sum *record.Summary
	if s.status != "" {
		sum = &record.Summary{RunID: s.runID, JSON: json.RawMessage(`{"run":{"planned_requests":2,"sent_requests":2}}`),
			Status: s.status, Reason: map[record.Status]string{record.Aborted: "engine unreachable"}[s.status],
			MeasureStart: mergeT0.Add(-s.offset)}
	}
	if err := j.Close(sum); err != nil {
		t.Fatal(err)
	}
	return path
}

// Three shards, one with its clock 2 s behind the barrier's: the merge
// moves its records onto the barrier's clock, tags each with its shard,
// orders them by completion, and computes the percentiles from all the
// records — not the mean of the shards' own.
func TestMergeRecomputesFromAllRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	specs := []shardSpec{
		{index: 0, recs: []record.Record{shardRec("r0", 0, 0.010), shardRec("r3", 0.3, 0.011)}},
		{index: 1, offset: 2 * time.Second, recs: []record.Record{shardRec("r1", 0.1, 0.500), shardRec("r4", 0.4, 0.510)}},
		{index: 2, recs: []record.Record{shardRec("r2", 0.2, 0.020), shardRec("r5", 0.5, 0.021)}},
	}
	var paths []string
	for _, s := range specs {
		s.count, s.runID, s.hash, s.status = 3, "run-x", "sha256:abc", record.Completed
		paths = append(paths, writeShard(t, filepath.Join(dir, "s"+string(rune('0'+s.index))), s))
	}
	f := &fakeExporter{}
	out := filepath.Join(dir, "merged")
	m, err := Merge{Sources: paths, OutputDir: out, Exporters: f, Version: "t", Log: zerolog.Nop()}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != record.Completed || m.Records != 6 || m.Run.ID != "run-x" {
		t.Fatalf("merged: status %s, %d records, run %s", m.Status, m.Records, m.Run.ID)
	}
	var ids, shards []string
	for _, r := range f.records {
		ids, shards = append(ids, r.RequestID), append(shards, r.Tags[ShardTag])
	}
	// r1 and r4 answer slowly: they finish after the others submitted.
	if want := []string{"r0", "r2", "r3", "r5", "r1", "r4"}; !slices.Equal(ids, want) {
		t.Errorf("records in completion order %v, want %v", ids, want)
	}
	if want := []string{"0", "2", "0", "2", "1", "1"}; !slices.Equal(shards, want) {
		t.Errorf("shard tags %v, want %v", shards, want)
	}
	for _, r := range f.records {
		if r.RequestID == "r1" && !r.Submit.Equal(mergeT0.Add(100*time.Millisecond)) {
			t.Errorf("r1 submitted at %v after t0 on the barrier's clock, want 100ms", r.Submit.Sub(mergeT0))
		}
	}
	if !slices.Contains(f.run.TagKeys, ShardTag) {
		t.Errorf("tag keys %v lack %q", f.run.TagKeys, ShardTag)
	}
	// The median of all six TTFTs, as one run computes it.
	var ttfts []float64
	for _, s := range specs {
		for _, r := range s.recs {
			ttfts = append(ttfts, r.TTFT*1000)
		}
	}
	b := stats.NewBuilder(mergeT0, 6, stats.Options{})
	for i := range f.records {
		b.Add(f.records[i])
	}
	want := b.Final([]float64{50, 90})
	if got := m.Final.P50TTFTMs; math.Abs(got-want.P50TTFTMs) > 1e-9 || math.Abs(got-medianOf(ttfts)) > 1e-9 {
		t.Errorf("merged p50 TTFT %v ms, want %v (all records)", got, medianOf(ttfts))
	}
	var meanOfShards float64
	for _, s := range specs {
		meanOfShards += (s.recs[0].TTFT + s.recs[1].TTFT) / 2 * 1000 / 3
	}
	if math.Abs(m.Final.P50TTFTMs-meanOfShards) < 1 {
		t.Errorf("merged p50 %v is the mean of the shards' medians (%v)", m.Final.P50TTFTMs, meanOfShards)
	}
	for _, p := range m.Parts {
		if p.MeasureLag != 0 {
			t.Errorf("shard %d: measured phase %v after the first, want 0 on the barrier's clock", p.Index, p.MeasureLag)
		}
	}
	// The run-wide rate, not a shard's part.
	if m.Run.RequestedRate != 30 {
		t.Errorf("requested rate %v, want the run's 30", m.Run.RequestedRate)
	}
	// The merged journal reads back with the same records and the shards.
	c, err := record.ReadJournal(filepath.Join(out, record.JournalName))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Records) != 6 || len(c.Run.Merged) != 3 || c.Summary == nil || c.Summary.Status != record.Completed {
		t.Errorf("merged journal: %d records, %d shards, summary %+v", len(c.Records), len(c.Run.Merged), c.Summary)
	}
	js, err := os.ReadFile(filepath.Join(out, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Results struct {
			Total int `json:"total_requests"`
		} `json:"results"`
		Run struct {
			Planned int `json:"planned_requests"`
		} `json:"run"`
		Shards []struct {
			Index  int    `json:"index"`
			Status string `json:"status"`
		} `json:"shards"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Results.Total != 6 || doc.Run.Planned != 6 || len(doc.Shards) != 3 || doc.Shards[1].Status != "completed" {
		t.Errorf("bench_summary.json: %s", js)
	}
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// Parts of different runs, configurations or shard counts, a shard given
// twice and an unsharded journal are refused, naming the files; a missing
// shard is refused unless the merge is partial, which marks it aborted.
func TestMergeChecksTheParts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := func(name string, s shardSpec) string {
		if s.runID == "" {
			s.runID = "run-y"
		}
		if s.hash == "" {
			s.hash = "sha256:abc"
		}
		if s.count == 0 {
			s.count = 3
		}
		if s.status == "" {
			s.status = record.Completed
		}
		s.recs = []record.Record{shardRec("r"+name, 0, 0.01)}
		return writeShard(t, filepath.Join(dir, name), s)
	}
	s0, s1, s2 := w("0", shardSpec{index: 0}), w("1", shardSpec{index: 1}), w("2", shardSpec{index: 2})
	other := w("other", shardSpec{index: 2, runID: "run-z"})
	hash := w("hash", shardSpec{index: 2, hash: "sha256:def", config: `{"seed":1,"percentiles":"50,99","tr_speedup":2}`})
	count := w("count", shardSpec{index: 2, count: 4})
	plain := writeJournal(t, filepath.Join(dir, "plain"), "run-y", "p", 1, true)
	again := w("1-again", shardSpec{index: 1}) // shard 1 twice, in two directories
	for _, tc := range []struct {
		paths []string
		want  string
	}{
		{[]string{s0, s1, other}, "of run run-z, but " + s0 + " is of run run-y"},
		{[]string{s0, s1, hash}, "ran configuration sha256:def, " + s0 + " ran sha256:abc " +
			`(percentiles: "50,99" here, "50,90" there; tr_speedup: 2 here, unset there)`},
		{[]string{s0, s1, count}, "shard 2 of 4 shards, but " + s0 + " says the run has 3"},
		{[]string{s0, s1, again}, "shard 1/3 is given twice"},
		{[]string{s0, plain}, "not a shard's journal"},
		{[]string{s0, s2}, "shard 1/3 missing (2 of 3 found)"},
	} {
		_, err := Merge{Sources: tc.paths, OutputDir: filepath.Join(dir, "out"), Log: zerolog.Nop()}.Run(context.Background())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("merge %v: %v, want an error with %q", tc.paths, err, tc.want)
		}
	}
	m, err := Merge{Sources: []string{s0, s2}, OutputDir: filepath.Join(dir, "partial"), Partial: true, Log: zerolog.Nop()}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != record.Aborted || !strings.Contains(m.Reason, "shard 1/3 missing from the merge") || m.Records != 2 {
		t.Errorf("partial merge: status %s, reason %q, %d records", m.Status, m.Reason, m.Records)
	}
}

// A shard that aborted or was killed leaves the merged run aborted or
// interrupted, its reason naming the shard; its records still count.
func TestMergeStatusOfShards(t *testing.T) {
	t.Parallel()
	mk := func(dir string, idx int, st record.Status) string {
		return writeShard(t, filepath.Join(dir, string(rune('a'+idx))), shardSpec{index: idx, count: 2, runID: "r", hash: "h", status: st,
			recs: []record.Record{shardRec("q"+string(rune('0'+idx)), 0, 0.01)}})
	}
	dir := t.TempDir()
	m, err := Merge{Sources: []string{mk(dir, 0, record.Completed), mk(dir, 1, "")}, OutputDir: filepath.Join(dir, "m1"), Log: zerolog.Nop()}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != record.Interrupted || !strings.Contains(m.Reason, "shard 1/2 interrupted: its journal has no summary") || m.Records != 2 {
		t.Errorf("killed shard: status %s, reason %q, %d records", m.Status, m.Reason, m.Records)
	}
	dir = t.TempDir()
	m, err = Merge{Sources: []string{mk(dir, 0, record.Aborted), mk(dir, 1, record.Completed)}, OutputDir: filepath.Join(dir, "m2"), Log: zerolog.Nop()}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != record.Aborted || !strings.Contains(m.Reason, "shard 0/2 aborted: engine unreachable") {
		t.Errorf("aborted shard: status %s, reason %q", m.Status, m.Reason)
	}
}

// BenchmarkMerge merges three shards of 20,000 measured requests each
// (journal, summary, no exporters): go test -bench Merge -benchmem ./core/merge
func BenchmarkMerge(b *testing.B) {
	dir := b.TempDir()
	var paths []string
	for i := range 3 {
		recs := make([]record.Record, 20000)
		for k := range recs {
			recs[k] = shardRec(fmt.Sprintf("r%d", k*3+i), float64(k*3+i)/1000, 0.01+float64(k%97)/1000)
		}
		paths = append(paths, writeShard(b, filepath.Join(dir, fmt.Sprint(i)),
			shardSpec{index: i, count: 3, runID: "bench", hash: "h", status: record.Completed, recs: recs}))
	}
	b.ResetTimer()
	for n := range b.N {
		out := filepath.Join(dir, fmt.Sprint("m", n))
		if _, err := (Merge{Sources: paths, OutputDir: out, Log: zerolog.Nop()}).Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(60000*b.N)/b.Elapsed().Seconds(), "records/s")
}
