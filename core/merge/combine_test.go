package merge

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/record"
)

// writeJournal writes a finished (summary) or killed (none) run's journal
// of n measured records, request ids prefix0…, each tagged doc=prefix.
func writeJournal(t *testing.T, dir, runID, prefix string, n int, finished bool) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, record.JournalName)
	j, err := record.CreateJournal(path, record.Run{ID: runID, Workload: "w", Model: "m", TagKeys: []string{"doc"}, Config: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		r := &record.Record{RunID: runID, Phase: record.Measure, Seq: int64(i), RequestID: prefix + string(rune('0'+i)), Success: true,
			Tags: map[string]string{"doc": prefix}}
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	var sum *record.Summary
	if finished {
		sum = &record.Summary{RunID: runID, JSON: json.RawMessage(`{}`), Total: int64(n), Successful: int64(n), Status: record.Completed}
	}
	if err := j.Close(sum); err != nil {
		t.Fatal(err)
	}
	return path
}

// Combine sends every part's records, in order, with the part's tags over
// the record's own, the part tag keys first; a missing journal is skipped,
// and the summary counts every part's records.
func TestCombine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	one := writeJournal(t, filepath.Join(dir, "p1"), "run-1", "a", 2, true)
	two := writeJournal(t, filepath.Join(dir, "p2"), "run-2", "b", 3, false) // killed: no summary
	f := &fakeExporter{}
	c := Combine{
		Parts: []CombinePart{
			{Journal: one, Tags: map[string]string{"point": "1", "rate": "2"}},
			{Journal: filepath.Join(dir, "p-none", record.JournalName), Tags: map[string]string{"point": "2"}},
			{Journal: two, Tags: map[string]string{"point": "3", "rate": "8", "doc": "over"}},
		},
		TagKeys: []string{"point", "rate"}, OutputDir: dir, Exporters: f,
		SummaryJSON: json.RawMessage(`{"sweep":true}`), Log: zerolog.Nop(),
	}
	res, n, err := c.Run(context.Background())
	if err != nil || n != 5 || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("Run = %v, %d records, %v; want one result of 5 records", res, n, err)
	}
	var got []string
	for _, r := range f.records {
		got = append(got, r.RunID+" "+r.RequestID+" point="+r.Tags["point"]+" rate="+r.Tags["rate"]+" doc="+r.Tags["doc"])
	}
	want := []string{
		"run-1 a0 point=1 rate=2 doc=a", "run-1 a1 point=1 rate=2 doc=a",
		"run-2 b0 point=3 rate=8 doc=over", "run-2 b1 point=3 rate=8 doc=over", "run-2 b2 point=3 rate=8 doc=over",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("records (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"point", "rate", "doc"}, f.run.TagKeys); d != "" || f.run.OutputDir != dir {
		t.Errorf("run: output dir %s, tag keys (-want +got):\n%s", f.run.OutputDir, d)
	}
	if s := f.summary; s == nil || s.Total != 5 || !s.Interrupted || string(s.JSON) != `{"sweep":true}` {
		t.Errorf("summary %+v; want 5 records, interrupted (a part was killed), the sweep's JSON", s)
	}
}

// A journal that cannot be read is an error naming it; no part at all
// exports nothing.
func TestCombineErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("not a journal\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &fakeExporter{}
	if _, _, err := (Combine{Parts: []CombinePart{{Journal: bad}}, OutputDir: dir, Exporters: f}).Run(context.Background()); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("unreadable journal: %v, want an error naming %s", err, bad)
	}
	res, n, err := Combine{Parts: []CombinePart{{Journal: filepath.Join(dir, "none.jsonl")}}, OutputDir: dir, Exporters: f}.Run(context.Background())
	if res != nil || n != 0 || err != nil || len(f.events) != 0 {
		t.Errorf("no journal: %v, %d, %v, exporter events %v; want nothing done", res, n, err, f.events)
	}
}
