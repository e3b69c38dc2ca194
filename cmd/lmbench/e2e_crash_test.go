package main

// End-to-end crash-safety tests: the real binaries (host, workload, CSV
// and Parquet exporters) against a real HTTP server, killed or interrupted
// mid-run, and `lmbench export` rebuilding the files from the journal.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"

	"github.com/lmbench/lmbench/core/record"
)

// seqBase + k is the prompt_tokens the seqEngine reports for its k-th
// request, so every exported row names the server request it came from.
const seqBase = 1_000_000

// seqEngine is an OpenAI-compatible streaming server that numbers requests
// in arrival order, answers after a delay, and records when it has sent
// the last byte of each answer.
type seqEngine struct {
	delay time.Duration
	srv   *httptest.Server

	mu        sync.Mutex
	next      int
	completed map[int]time.Time
}

func newSeqEngine(t *testing.T, delay time.Duration) *seqEngine {
	e := &seqEngine{delay: delay, completed: map[int]time.Time{}}
	e.srv = httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *seqEngine) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/tokenize" { // an engine without one: lengths stay in words
		http.NotFound(w, r)
		return
	}
	if r.URL.Path == "/v1/models" {
		io.WriteString(w, `{"object":"list","data":[{"id":"fake-model","object":"model"}]}`)
		return
	}
	var body struct {
		MaxTokens int `json:"max_tokens"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	e.mu.Lock()
	k := e.next
	e.next++
	e.mu.Unlock()
	select {
	case <-time.After(e.delay):
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	n := min(max(body.MaxTokens, 1), 3)
	for i := range n {
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok%d \"}}]}\n\n", i)
		fl.Flush()
	}
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", seqBase+k, n)
	fl.Flush()
	e.mu.Lock()
	e.completed[k] = time.Now()
	e.mu.Unlock()
}

// completedSet returns the requests fully answered so far.
func (e *seqEngine) completedSet() map[int]bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[int]bool{}
	for k := range e.completed {
		out[k] = true
	}
	return out
}

// pqRow is the part of a Parquet results row these tests check; columns
// are matched by name.
type pqRow struct {
	RunID        string     `parquet:"run_id"`
	Phase        string     `parquet:"phase"`
	Seq          int64      `parquet:"seq"`
	RequestID    string     `parquet:"request_id"`
	Success      bool       `parquet:"success"`
	Error        *string    `parquet:"error,optional"`
	TTFTMs       *float64   `parquet:"ttft_ms,optional"`
	LatencyMs    float64    `parquet:"latency_ms"`
	InputTokens  int64      `parquet:"input_tokens"`
	OutputTokens int64      `parquet:"output_tokens"`
	SubmitTime   *time.Time `parquet:"submit_time,optional,timestamp(nanosecond)"`
	FinishTime   *time.Time `parquet:"finish_time,optional,timestamp(nanosecond)"`
	TagDoc       *string    `parquet:"tag_doc,optional"`
	TagQuery     *string    `parquet:"tag_query,optional"`
	// Schema version 3.
	StatedPromptTokens *int64 `parquet:"stated_prompt_tokens,optional"`
	ExplicitSchedule   bool   `parquet:"explicit_schedule"`
}

// readParquet reads a results file and its footer metadata.
func readParquet(t *testing.T, path string) ([]pqRow, map[string]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatalf("%s is not a complete Parquet file: %v", path, err)
	}
	meta := map[string]string{}
	for _, kv := range pf.Metadata().KeyValueMetadata {
		meta[kv.Key] = kv.Value
	}
	r := parquet.NewGenericReader[pqRow](pf)
	defer r.Close()
	rows := make([]pqRow, pf.NumRows())
	n, err := r.Read(rows)
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("%s: %v", path, err)
	}
	return rows[:n], meta
}

// checkRowsMatchJournal compares every Parquet row with the journal record
// at the same position.
func checkRowsMatchJournal(t *testing.T, rows []pqRow, recs []record.Record) {
	t.Helper()
	if len(rows) != len(recs) {
		t.Fatalf("Parquet has %d rows, the journal %d records", len(rows), len(recs))
	}
	for i, r := range recs {
		g := rows[i]
		ok := g.RunID == r.RunID && g.Phase == r.Phase.String() && g.Seq == r.Seq && g.RequestID == r.RequestID &&
			g.Success == r.Success && g.LatencyMs == r.Latency*1000 &&
			g.InputTokens == r.InputTokens && g.OutputTokens == r.OutputTokens &&
			g.SubmitTime != nil && g.SubmitTime.UnixNano() == r.Submit.UnixNano() &&
			g.FinishTime != nil && g.FinishTime.UnixNano() == r.Finish.UnixNano() &&
			g.ExplicitSchedule == r.ExplicitSchedule
		if r.StatedPromptTokens > 0 {
			ok = ok && g.StatedPromptTokens != nil && *g.StatedPromptTokens == r.StatedPromptTokens
		} else {
			ok = ok && g.StatedPromptTokens == nil
		}
		if doc, tagged := r.Tags["doc"]; tagged {
			ok = ok && g.TagDoc != nil && *g.TagDoc == doc
		} else {
			ok = ok && g.TagDoc == nil
		}
		if r.TTFT >= 0 && !r.FirstToken.IsZero() {
			ok = ok && g.TTFTMs != nil && *g.TTFTMs == r.TTFT*1000
		} else {
			ok = ok && g.TTFTMs == nil
		}
		if r.Success {
			ok = ok && g.Error == nil
		} else {
			ok = ok && g.Error != nil && *g.Error == r.Error
		}
		if !ok {
			t.Errorf("row %d differs from the journal:\n row    %+v\n record %+v", i, g, r)
		}
	}
}

// checkCSVMatchesJournal: the CSV (measured requests only, by default) has
// the journal's measured requests in order.
func checkCSVMatchesJournal(t *testing.T, path string, recs []record.Record) {
	t.Helper()
	rows := readCSV(t, path)
	var want []string
	for _, r := range recs {
		if r.Phase == record.Measure {
			want = append(want, r.RequestID+"|"+strconv.FormatInt(r.InputTokens, 10))
		}
	}
	var got []string
	for _, row := range rows[1:] {
		got = append(got, row[0]+"|"+row[4])
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s rows (request_id|num_input_tokens):\n got  %v\n want %v", path, got, want)
	}
}

// kill -9 of the host mid-run: the Parquet file never appears half-written
// under its name, and `lmbench export` rebuilds CSV and Parquet files with
// every request that had finished before the kill.
func TestKilledHostReexportFromJournal(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	const inflight = 4
	eng := newSeqEngine(t, 100*time.Millisecond)
	out := t.TempDir()
	cmd, _, stderr := startLmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload", "long-doc-qa",
		"--tokens-per-gb-kvcache", "2000", "--kv-cache-volume", "1", "--ldqa-document-length", "100", "--ldqa-query-per-document", "10",
		"--ldqa-num-inflight-requests", strconv.Itoa(inflight), "--exporter", "parquet",
		"--no-interactive", "-q", "--output-dir", out)
	// 20 warmup requests (one per document), then 200 measured ones.
	waitFor(t, "40 answered requests", func() bool { return len(eng.completedSet()) >= 40 })
	// Requests answered before this snapshot have had ample time to be
	// read and journaled by the time of the kill; later ones may be in flight.
	finished := eng.completedSet()
	time.Sleep(time.Second)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	atKill := eng.completedSet()
	if st := cmd.ProcessState; st != nil && st.Exited() {
		t.Fatalf("the run ended before the kill; make it longer\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "bench_results.parquet")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bench_results.parquet exists after kill -9 (err %v): an incomplete file under the final name", err)
	}

	re := t.TempDir()
	journal := filepath.Join(out, record.JournalName)
	r := lmbench(t, nil, "export", "--journal", journal, "--exporter", "csv", "--exporter", "parquet", "--output-dir", re)
	if r.code != 0 {
		t.Fatalf("export exit %d\n%s", r.code, r.stderr)
	}
	for _, f := range []string{"bench_results.csv", "bench_results.parquet"} {
		if !strings.Contains(r.stdout, filepath.Join(re, f)) {
			t.Errorf("export output does not list %s:\n%s", f, r.stdout)
		}
	}
	rows, meta := readParquet(t, filepath.Join(re, "bench_results.parquet"))
	recs := readJournal(t, journal).Records
	checkRowsMatchJournal(t, rows, recs)
	checkCSVMatchesJournal(t, filepath.Join(re, "bench_results.csv"), recs)

	exported := map[int]bool{}
	for _, row := range rows {
		k := int(row.InputTokens - seqBase)
		if !atKill[k] {
			t.Errorf("row %s names server request %d, which the server never answered", row.RequestID, k)
		}
		exported[k] = true
	}
	var lost []int
	for k := range finished {
		if !exported[k] {
			lost = append(lost, k)
		}
	}
	if len(lost) > 0 {
		slices.Sort(lost)
		t.Errorf("requests answered ≥1 s before the kill are missing from the re-export: %v", lost)
	}
	if n := len(atKill) - len(exported); n > inflight {
		t.Errorf("%d answered requests not in the journal, at most %d (in flight) expected", n, inflight)
	}
	if meta["lmbench.interrupted"] != "true" || meta["lmbench.run_id"] != recs[0].RunID {
		t.Errorf("metadata interrupted=%q run_id=%q", meta["lmbench.interrupted"], meta["lmbench.run_id"])
	}
	var summary map[string]any
	if err := json.Unmarshal([]byte(meta["lmbench.summary"]), &summary); err != nil {
		t.Fatalf("summary metadata: %v", err)
	}
	measured := 0
	for _, r := range recs {
		if r.Phase == record.Measure {
			measured++
		}
	}
	if measured == 0 {
		t.Fatal("no measured request before the kill: the CSV comparison proves nothing")
	}
	if got := summary["results"].(map[string]any)["total_requests"]; got != float64(measured) {
		t.Errorf("computed summary total_requests %v, journal has %d measured", got, measured)
	}
	// The engine block comes back from the journal's header: what
	// lmbench found the engine to be, not only what the records say.
	if eng, _ := summary["engine"].(map[string]any); eng == nil || eng["kind"] != "unknown" || eng["detected_from"] == nil {
		t.Errorf("computed summary's engine block = %v, want the run's (kind unknown)", summary["engine"])
	}
	t.Logf("answered before snapshot %d, at kill %d, exported %d (%d measured)", len(finished), len(atKill), len(exported), measured)
}

// Ctrl-C mid-run: exit 130, and both the CSV and the Parquet file are
// complete, readable and hold exactly the journal's requests.
func TestInterruptCompleteCSVAndParquet(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newSeqEngine(t, 50*time.Millisecond)
	out := t.TempDir()
	cmd, _, stderr := startLmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload", "long-doc-qa",
		"--tokens-per-gb-kvcache", "2000", "--kv-cache-volume", "1", "--ldqa-document-length", "100", "--ldqa-query-per-document", "10",
		"--ldqa-num-inflight-requests", "3", "--exporter", "parquet", "--parquet-row-group-size", "4",
		"--no-interactive", "-q", "--output-dir", out)
	journal := filepath.Join(out, record.JournalName)
	waitFor(t, "journaled requests", func() bool {
		return journaled(journal) >= 30 // 20 warmup, then measured
	})
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(cmd.Wait()); code != exitInterrupted {
		t.Fatalf("exit %d, want 130\n%s", code, stderr)
	}
	recs := readJournal(t, journal).Records
	if len(recs) >= 220 {
		t.Fatalf("the run finished (%d records) before the interrupt", len(recs))
	}
	if recs[len(recs)-1].Phase != record.Measure {
		t.Fatal("interrupted before any measured request: the CSV comparison proves nothing")
	}
	rows, meta := readParquet(t, filepath.Join(out, "bench_results.parquet"))
	checkRowsMatchJournal(t, rows, recs)
	checkCSVMatchesJournal(t, filepath.Join(out, "bench_results.csv"), recs)
	if meta["lmbench.interrupted"] != "true" {
		t.Errorf("lmbench.interrupted = %q", meta["lmbench.interrupted"])
	}
	var summary map[string]any
	if err := json.Unmarshal([]byte(meta["lmbench.summary"]), &summary); err != nil || summary["run"].(map[string]any)["interrupted"] != true {
		t.Errorf("summary metadata %q (%v)", meta["lmbench.summary"], err)
	}
	if partial, _ := filepath.Glob(filepath.Join(out, "*.partial")); len(partial) > 0 {
		t.Errorf("temporary files left: %v", partial)
	}

	// Re-exporting the finished journal reproduces the files: the same CSV
	// bytes and the same Parquet rows, with the run's own summary. Exporter
	// options reach the plugins (the Parquet file's name here).
	re := t.TempDir()
	r := lmbench(t, nil, "export", "--journal", journal, "--exporter", "csv", "--exporter", "parquet", "--output-dir", re,
		"--parquet-file", "rebuilt.parquet")
	if r.code != 0 {
		t.Fatalf("export exit %d\n%s", r.code, r.stderr)
	}
	a, _ := os.ReadFile(filepath.Join(out, "bench_results.csv"))
	b, _ := os.ReadFile(filepath.Join(re, "bench_results.csv"))
	if string(a) != string(b) {
		t.Error("re-exported CSV differs from the run's")
	}
	reRows, reMeta := readParquet(t, filepath.Join(re, "rebuilt.parquet"))
	checkRowsMatchJournal(t, reRows, recs)
	for _, k := range []string{"lmbench.run_id", "lmbench.config", "lmbench.schema_version"} {
		if reMeta[k] != meta[k] {
			t.Errorf("re-exported %s = %q, run wrote %q", k, reMeta[k], meta[k])
		}
	}
	// The run's own summary, not one computed again (whose elapsed time
	// and percentiles would differ): the same JSON value. The journal
	// keeps the summary's content, not its indentation.
	var runSummary, reSummary any
	if err := json.Unmarshal([]byte(meta["lmbench.summary"]), &runSummary); err != nil {
		t.Fatalf("run's lmbench.summary: %v", err)
	}
	if err := json.Unmarshal([]byte(reMeta["lmbench.summary"]), &reSummary); err != nil {
		t.Fatalf("re-exported lmbench.summary: %v", err)
	}
	if d := cmp.Diff(runSummary, reSummary); d != "" {
		t.Errorf("re-exported lmbench.summary differs from the run's (-run +re-export):\n%s", d)
	}
}

func TestExportErrors(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	dir := t.TempDir()
	notJournal := filepath.Join(dir, "x.jsonl")
	os.WriteFile(notJournal, []byte(`{"kind":"request","record":{}}`+"\n"), 0o644)
	emptyJournal := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(emptyJournal, []byte(`{"kind":"run","version":1,"run":{"runId":"r"}}`+"\n"), 0o644)
	for name, tc := range map[string]struct {
		args []string
		code int
		want []string
	}{
		"no journal":      {[]string{"export"}, exitUsage, []string{"--journal", "required"}},
		"missing journal": {[]string{"export", "--journal", filepath.Join(dir, "none.jsonl")}, exitFailed, []string{"--journal", "none.jsonl", "no such file"}},
		"not a journal":   {[]string{"export", "--journal", notJournal}, exitFailed, []string{"--journal", "x.jsonl", "not an lmbench journal"}},
		"bad option":      {[]string{"export", "--journal", emptyJournal, "--exporter", "parquet", "--parquet-compression", "brotli"}, exitUsage, []string{"--parquet-compression", "brotli"}},
		"unknown flag":    {[]string{"export", "--journal", notJournal, "--csv-nope", "1"}, exitUsage, []string{"unknown flag", "--csv-nope"}},
		"unknown plugin":  {[]string{"export", "--journal", notJournal, "--exporter", "nope"}, exitUsage, []string{"--exporter", "nope"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := lmbench(t, nil, tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d\n%s", r.code, tc.code, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr does not mention %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}

// An exporter named twice writes its file once: run and export both
// accept it (it used to fail as two plugins claiming --parquet-).
func TestExporterNamedTwice(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	dir := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload", "random-prefill", "--rp-num-requests", "2",
		"--rp-request-length", "20", "--tokens-per-gb-kvcache", "1000", "--no-interactive", "-q", "--output-dir", dir,
		"--exporter", "parquet", "--exporter", "csv", "--exporter", "parquet")
	if r.code != exitOK {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	for _, f := range []string{"bench_results.csv", "bench_results.parquet"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("run: %v", err)
		}
	}
	out := t.TempDir()
	r = lmbench(t, nil, "export", "--journal", filepath.Join(dir, "bench_journal.jsonl"), "--output-dir", out,
		"--exporter", "parquet", "--exporter", "parquet")
	if r.code != exitOK {
		t.Fatalf("export: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "bench_results.parquet")); err != nil {
		t.Errorf("export: %v", err)
	}
}
