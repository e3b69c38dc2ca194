package merge

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/record"
)

// A killed run's journal (no summary, a torn last line) re-exports with a
// bench_summary.json that says interrupted, replacing whatever summary
// the directory held, and the torn line is counted and named in the log.
func TestReexportOfATornJournal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeJournal(t, dir, "run-1", "d", 3, false)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"kind":"request","record":{"run_id":"run-1","ph`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	stale := `{"run":{"status":"completed","interrupted":false}}`
	if err := os.WriteFile(filepath.Join(dir, record.SummaryName), []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	exp := &fakeExporter{}
	out, err := Reexport{Journal: path, Exporters: exp, Log: zerolog.New(&logs)}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if out.Unreadable != 1 || !out.Computed || out.Records != 3 {
		t.Errorf("Unreadable %d, Computed %v, Records %d; want 1, true, 3", out.Unreadable, out.Computed, out.Records)
	}
	if !strings.Contains(logs.String(), `"unreadable_lines":1`) || !strings.Contains(logs.String(), "cut short") {
		t.Errorf("the log does not say a line was unreadable:\n%s", logs.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, record.SummaryName))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Run struct {
			Status      string `json:"status"`
			Interrupted bool   `json:"interrupted"`
		} `json:"run"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v\n%s", record.SummaryName, err, b)
	}
	if doc.Run.Status != "interrupted" || !doc.Run.Interrupted {
		t.Errorf("%s says status %q, interrupted %v; want interrupted as the exporters were told", record.SummaryName, doc.Run.Status, doc.Run.Interrupted)
	}
	if exp.summary == nil || !exp.summary.Interrupted {
		t.Errorf("the exporters' summary is not marked interrupted: %+v", exp.summary)
	}
}

// A killed run's summary, computed from its journal, has the engine
// block its header recorded.
func TestComputedSummaryKeepsTheEngine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), record.JournalName)
	engine := `{"kind":"llamacpp","name":"llama.cpp server","version":"b6400","detected_from":"GET /props","cached_tokens":"timings.cache_n",` +
		`"ignore_eos":true,"min_tokens":false,"seed":true,"can":["cache reset: POST /slots/{id}?action=erase"],"cannot":["x"]}`
	j, err := record.CreateJournal(path, record.Run{ID: "r", Workload: "w", Model: "m", Config: json.RawMessage(`{}`), Engine: json.RawMessage(engine)})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append(&record.Record{RunID: "r", Phase: record.Measure, RequestID: "a", Success: true}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(nil); err != nil {
		t.Fatal(err)
	}
	_, sum, computed, err := ReadJournal(path)
	if err != nil || !computed {
		t.Fatalf("ReadJournal: computed %v, %v", computed, err)
	}
	var doc struct {
		Engine map[string]any `json:"engine"`
	}
	if err := json.Unmarshal(sum.JSON, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Engine["kind"] != "llamacpp" || doc.Engine["cached_tokens"] != "timings.cache_n" || doc.Engine["version"] != "b6400" {
		t.Errorf("engine block = %v, want the header's", doc.Engine)
	}
}
