package record

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// t0 is a run's start, with nanoseconds that a float of seconds would lose.
var t0 = time.Unix(1_796_115_783, 17_003_781)

func testRun() Run {
	return Run{ID: "20261201T090303Z-10bacb4d", Workload: "long-doc-qa", Model: "m-7b", OutputDir: "/tmp/out dir/ü",
		Version: "0.2.0", TagKeys: []string{"doc", "query"}, Config: json.RawMessage(`{"seed":42,"model":"m-7b","ldqa_document_length":2000}`),
		Started: t0}
}

// shardedRun is testRun as shard 1 of 3, merged too (a header has one or
// the other, but both must survive).
func shardedRun() Run {
	r := testRun()
	sh := Shard{Index: 1, Count: 3, RunID: r.ID, ConfigHash: "sha256:0f3a", Seed: -7, RequestedRate: 12.5, Host: "node-ü",
		StartAt: t0.Add(-time.Second), Lateness: -3 * time.Millisecond,
		Clock: Clock{Reference: "barrier http://b:7070", Offset: -41 * time.Microsecond, RTT: 230 * time.Microsecond, Samples: 8}}
	r.Shard = &sh
	r.Merged = []Shard{sh, {Index: 0, Count: 3, RunID: r.ID, Clock: Clock{Reference: "local"}}}
	return r
}

// fullRecord sets every field, tags with quotes, newlines and non-ASCII.
func fullRecord(seq int64) Record {
	return Record{
		RunID: "20261201T090303Z-10bacb4d", Workload: "long-doc-qa", Phase: Measure, RequestID: fmt.Sprintf("doc%d_q\"0\"", seq),
		Tags: map[string]string{
			"doc":        strconv.FormatInt(seq, 10),
			`say "hi"`:   "line one\nline two\r\n\ttabbed \\ back\\slash",
			"ünïcødé 日本": "✓ \u2028\u2029 emoji 🦀 nul \x00 bell \a",
		},
		Success: true, Error: "", TTFT: 0.0123456789, Latency: 1.5000000001, DecodeSpeed: 100.73285901477608, ITL: 0.01000442,
		InputTokens: 2000, OutputTokens: 128, CachedTokens: 1984,
		Scheduled: t0.Add(3 * time.Second), ExplicitSchedule: true, Submit: t0.Add(3*time.Second + 17),
		FirstToken: t0.Add(3*time.Second + 12_345_706), Finish: t0.Add(4*time.Second + 500_000_017), Seq: seq,
		Chunks: 5, UsageOutputTokens: 128, ChunkOffsetsUs: []int64{12_345, 22_346, 32_400, 1_400_000, 1_487_654_321},
		FinishReason: "length", ResponseID: "chatcmpl-\"7\"\n", ResponseModel: "org/m-7b ü",
	}
}

// journalRecords are the records a v2 round trip must preserve, and what
// reading them back must give.
func journalRecords() (in, want []Record) {
	ok := fullRecord(1)

	failed := fullRecord(2)
	failed.Phase, failed.Success, failed.Error = Warmup, false, "HTTP 503: {\"error\": \"overloaded\"}\nretry later"
	failed.TTFT, failed.DecodeSpeed, failed.ITL, failed.OutputTokens = -1, 0, 0, 0
	failed.FirstToken, failed.ExplicitSchedule = time.Time{}, false
	failed.Chunks, failed.UsageOutputTokens, failed.ChunkOffsetsUs = 0, 0, nil
	failed.FinishReason, failed.ResponseID, failed.ResponseModel = "", "", ""

	// Floats JSON cannot hold are written as null and read back as NaN.
	odd := fullRecord(3)
	odd.TTFT, odd.Latency, odd.DecodeSpeed, odd.ITL = math.NaN(), math.Inf(1), math.Inf(-1), 5e-324
	oddWant := odd
	oddWant.Latency, oddWant.DecodeSpeed = math.NaN(), math.NaN()

	// Zero times stay zero (not 1970); extremes of the other fields survive.
	bare := Record{RunID: "r", Phase: Measure, RequestID: "bare", Tags: map[string]string{},
		TTFT: 1e300, Latency: math.Copysign(0, -1), InputTokens: math.MaxInt64, OutputTokens: -1, CachedTokens: math.MinInt64, Seq: 4}

	// A long answer keeps the first MaxChunkOffsets offsets and says so.
	long := fullRecord(5)
	long.Chunks, long.ChunkOffsetsTruncated = MaxChunkOffsets+100, true
	long.ChunkOffsetsUs = make([]int64, MaxChunkOffsets)
	for i := range long.ChunkOffsetsUs {
		long.ChunkOffsetsUs[i] = 12_345 + int64(i)*10_001
	}

	// An empty offset list reads back as none (nil), like an absent one.
	empty := fullRecord(6)
	empty.ChunkOffsetsUs, empty.Chunks = []int64{}, 0
	emptyWant := empty
	emptyWant.ChunkOffsetsUs = nil

	in = []Record{ok, failed, odd, bare, long, empty}
	want = []Record{ok, failed, oddWant, bare, long, emptyWant}
	return in, want
}

var cmpRecords = cmp.Options{cmpopts.EquateNaNs()}

func ptrs(rs []Record) []*Record {
	out := make([]*Record, len(rs))
	for i := range rs {
		out[i] = &rs[i]
	}
	return out
}

func TestJournalRoundTrip(t *testing.T) {
	t.Parallel()
	for name, run := range map[string]Run{"unsharded": testRun(), "sharded": shardedRun()} {
		t.Run(name, func(t *testing.T) { t.Parallel(); journalRoundTrip(t, run) })
	}
}

func journalRoundTrip(t *testing.T, run Run) {
	path := filepath.Join(t.TempDir(), "nested", "dir", JournalName) // CreateJournal makes the directories
	j, err := CreateJournal(path, run)
	if err != nil {
		t.Fatal(err)
	}
	if j.Path() != path {
		t.Errorf("Path() = %q, want %q", j.Path(), path)
	}
	in, want := journalRecords()
	// One record alone, then the rest in one call: both forms of Append.
	if err := j.Append(&in[0]); err != nil {
		t.Fatal(err)
	}
	if err := j.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := j.Append(ptrs(in[1:])...); err != nil {
		t.Fatal(err)
	}
	if err := j.Flush(); err != nil {
		t.Fatal(err)
	}

	// Readable before Close: a killed host leaves exactly this.
	c, err := ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Version != JournalVersion || c.Torn || c.Summary != nil {
		t.Errorf("before Close: version %d, torn %v, summary %+v; want %d, false, nil", c.Version, c.Torn, c.Summary, JournalVersion)
	}
	if d := cmp.Diff(run, c.Run); d != "" {
		t.Errorf("run (-want +got):\n%s", d)
	}
	if head, err := ReadRun(path); err != nil || !cmp.Equal(run, head) {
		t.Errorf("ReadRun = %+v, %v; want the header", head, err)
	}
	if d := cmp.Diff(want, c.Records, cmpRecords); d != "" {
		t.Errorf("records (-want +got):\n%s", d)
	}
	if !c.Records[1].FirstToken.IsZero() || !c.Records[3].Submit.IsZero() {
		t.Errorf("zero times read back as %v and %v, want zero", c.Records[1].FirstToken, c.Records[3].Submit)
	}

	summary := Summary{RunID: run.ID, JSON: json.RawMessage(`{"config":{"seed":42},"results":{"total_requests":3,"mean_ttft_ms":12.3},"run":{"interrupted":true}}`),
		Total: 3, Successful: 2, Failed: 1, Elapsed: 17.823767788, Interrupted: true,
		Status: Aborted, Reason: "engine unreachable: 20 connection failures in a row", MeasureStart: t0.Add(2*time.Second + 5)}
	if err := j.Close(&summary); err != nil {
		t.Fatal(err)
	}
	c, err = ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Summary == nil {
		t.Fatal("no summary after Close")
	}
	if d := cmp.Diff(summary, *c.Summary); d != "" {
		t.Errorf("summary (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, c.Records, cmpRecords); d != "" {
		t.Errorf("records after Close (-want +got):\n%s", d)
	}
}

// What the header and a summary without content become.
func TestJournalEmptyParts(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), JournalName)
	j, err := CreateJournal(path, Run{ID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Close(&Summary{RunID: "r", Total: 0}); err != nil {
		t.Fatal(err)
	}
	c, err := ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	// No configuration is written as {}, no summary JSON as null (read back as none).
	if d := cmp.Diff(Run{ID: "r", Config: json.RawMessage(`{}`)}, c.Run); d != "" {
		t.Errorf("run (-want +got):\n%s", d)
	}
	if c.Summary == nil || c.Summary.JSON != nil || c.Summary.RunID != "r" {
		t.Errorf("summary %+v, want one with no JSON", c.Summary)
	}
	if len(c.Records) != 0 {
		t.Errorf("records %v, want none", c.Records)
	}
}

func TestJournalCloseWithoutSummary(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), JournalName)
	j, err := CreateJournal(path, testRun())
	if err != nil {
		t.Fatal(err)
	}
	r := fullRecord(1)
	j.Append(&r)
	if err := j.Close(nil); err != nil {
		t.Fatal(err)
	}
	c, err := ReadJournal(path)
	if err != nil || c.Summary != nil || len(c.Records) != 1 || c.Torn {
		t.Fatalf("contents %+v, %v; want one record and no summary", c, err)
	}
}

func TestJournalFirstLine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), JournalName)
	j, err := CreateJournal(path, testRun())
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close(nil)
	// The header is on disk as soon as the journal exists.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, _, ok := bytes.Cut(b, []byte("\n"))
	if !ok {
		t.Fatalf("journal %q has no complete first line", b)
	}
	if !bytes.HasPrefix(first, []byte(`{"kind":"run","version":2,`)) {
		t.Errorf("first line %s, want it to start with {\"kind\":\"run\",\"version\":2,", first)
	}
	var head struct {
		Kind    string
		Version int
		Run     map[string]any
	}
	if err := json.Unmarshal(first, &head); err != nil {
		t.Fatalf("first line is not JSON: %v", err)
	}
	wantRun := map[string]any{"run_id": "20261201T090303Z-10bacb4d", "workload": "long-doc-qa", "model": "m-7b",
		"output_dir": "/tmp/out dir/ü", "lmbench_version": "0.2.0", "tag_keys": []any{"doc", "query"},
		"config": map[string]any{"seed": 42.0, "model": "m-7b", "ldqa_document_length": 2000.0}, "started_unix_ns": float64(t0.UnixNano())}
	if d := cmp.Diff(wantRun, head.Run); d != "" {
		t.Errorf("run header (-want +got):\n%s", d)
	}
}

// Appends from several goroutines never interleave inside a line.
func TestJournalConcurrentAppend(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), JournalName)
	j, err := CreateJournal(path, testRun())
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 4, 250
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				r := fullRecord(int64(w*each + i + 1))
				r.Error = strings.Repeat("e", 1000) // lines longer than small writes
				if err := j.Append(&r); err != nil {
					t.Error(err)
					return
				}
				if i%50 == 0 {
					j.Flush()
				}
			}
		})
	}
	wg.Wait()
	if err := j.Close(nil); err != nil {
		t.Fatal(err)
	}
	c, err := ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for _, r := range c.Records {
		seen[r.Seq] = true
	}
	if len(c.Records) != workers*each || len(seen) != workers*each || c.Torn {
		t.Errorf("%d records, %d distinct, torn %v; want %d", len(c.Records), len(seen), c.Torn, workers*each)
	}
}

func TestJournalTornLastLineIsIgnored(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), JournalName)
	j, err := CreateJournal(path, Run{ID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	a, b := fullRecord(1), fullRecord(2)
	j.Append(&a, &b)
	j.Flush()
	appendTo(t, path, `{"kind":"request","record":{"run_id":"r","requ`)
	c, err := ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Records) != 2 || !c.Torn || c.Summary != nil {
		t.Fatalf("got %d records, torn %v, summary %v; want 2, true, nil", len(c.Records), c.Torn, c.Summary)
	}
	j.Close(nil)
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeJournal writes a journal with the given lines after a v2 header.
func writeJournal(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), JournalName)
	j, err := CreateJournal(path, Run{ID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Close(nil); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path, strings.Join(lines, "\n")+"\n")
	return path
}

func requestLine(t *testing.T, r Record) string {
	t.Helper()
	return `{"kind":"request","record":` + string(AppendJSON(nil, &r)) + `}`
}

func TestReadJournalErrors(t *testing.T) {
	t.Parallel()
	good := requestLine(t, fullRecord(1))
	badPhase := strings.Replace(requestLine(t, fullRecord(2)), `"phase":"measure"`, `"phase":"cooldown"`, 1)
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		path string
		want []string // the error contains each
	}{
		{"a corrupt line in the middle", writeJournal(t, good, `{"kind":"request","record":{"run_id":`, good),
			[]string{JournalName + ":3:", "not a journal line"}},
		{"garbage in the middle", writeJournal(t, good, good, "not json at all", good),
			[]string{JournalName + ":4:", "not a journal line"}},
		{"a record of the wrong shape", writeJournal(t, `{"kind":"request","record":{"seq":"one"}}`, good),
			[]string{JournalName + ":2:", "request record"}},
		{"an unknown phase", writeJournal(t, good, badPhase),
			[]string{JournalName + ":3:", `phase "cooldown"`, "want warmup or measure"}},
		{"a newer version", file("v3.jsonl", `{"kind":"run","version":3,"run":{"run_id":"r"}}`+"\n"+good+"\n"),
			[]string{"v3.jsonl", "journal version 3", "this lmbench reads versions 1 and 2"}},
		{"no version", file("v0.jsonl", `{"kind":"run","run":{"run_id":"r"}}`+"\n"),
			[]string{"v0.jsonl", "journal version 0"}},
		{"no run header", file("x.jsonl", good+"\n"), []string{"x.jsonl", "no run header", "not an lmbench journal"}},
		{"empty", file("empty.jsonl", ""), []string{"empty.jsonl", "empty", "not an lmbench journal"}},
		{"a torn header is no journal", file("torn.jsonl", `{"kind":"run","vers`), []string{"torn.jsonl:1:", "not a journal line"}},
		{"missing", filepath.Join(dir, "missing.jsonl"), []string{"missing.jsonl", "no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := ReadJournal(tt.path)
			if err == nil {
				t.Fatalf("read %+v, want an error", c)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), tt.path) {
				t.Errorf("error %q does not name the file %s", err, tt.path)
			}
		})
	}
}

// v1 journals are the real files of lmbench 0.1 (protobuf JSON).

// requestLines counts the complete request lines of a journal file.
func requestLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	lines := strings.Split(string(b), "\n")
	for _, l := range lines[:len(lines)-1] { // the last element has no newline: torn, or ""
		if strings.HasPrefix(l, `{"kind":"request"`) {
			n++
		}
	}
	return n
}

func TestReadJournalV1Complete(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "v1-complete.jsonl")
	c, err := ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Version != 1 || c.Torn {
		t.Errorf("version %d torn %v, want 1, false", c.Version, c.Torn)
	}
	if n := requestLines(t, path); len(c.Records) != n || n != 80 {
		t.Errorf("%d records, want %d (the request lines; 80)", len(c.Records), n)
	}

	run := c.Run
	run.Config = nil
	wantRun := Run{ID: "20261201T090303Z-10bacb4d", Workload: "long-doc-qa", Model: "lmbench-sim", OutputDir: "/tmp/v1j/ldqa",
		Version: "0.1.0-dev", TagKeys: []string{"doc", "query"}, Started: time.Unix(0, 1796115783017003780)}
	if d := cmp.Diff(wantRun, run); d != "" {
		t.Errorf("run (-want +got):\n%s", d)
	}
	var cfg map[string]any
	if err := json.Unmarshal(c.Run.Config, &cfg); err != nil {
		t.Fatalf("run config %q: %v", c.Run.Config, err)
	}
	wantCfg := map[string]any{"model": "lmbench-sim", "workload": "long-doc-qa", "kv_cache_volume": 1.0, "tokens_per_gb_kvcache": 8192.0,
		"ldqa_document_length": 200.0, "ldqa_query_per_document": 1.0, "ldqa_shuffle_policy": "random", "ldqa_num_inflight_requests": 3.0, "seed": 42.0}
	if d := cmp.Diff(wantCfg, cfg); d != "" {
		t.Errorf("run config (-want +got):\n%s", d)
	}

	// The first record, every field as the file has it.
	want0 := Record{RunID: "20261201T090303Z-10bacb4d", Workload: "long-doc-qa", Phase: Warmup, RequestID: "warmup_doc0",
		Tags: map[string]string{"doc": "0"}, Success: true, TTFT: 0.011168662, Latency: 0.011201557, DecodeSpeed: 30399.756801945583,
		InputTokens: 192, OutputTokens: 1, Scheduled: time.Unix(0, 1796115783018433541), ExplicitSchedule: true,
		Submit: time.Unix(0, 1796115783019234082), FirstToken: time.Unix(0, 1796115783030402744), Finish: time.Unix(0, 1796115783030435639), Seq: 1}
	if d := cmp.Diff(want0, c.Records[0]); d != "" {
		t.Errorf("first record (-want +got):\n%s", d)
	}
	phases := map[Phase]int{}
	for i, r := range c.Records {
		phases[r.Phase]++
		if r.Seq != int64(i+1) {
			t.Errorf("record %d has seq %d", i, r.Seq)
		}
	}
	if d := cmp.Diff(map[Phase]int{Warmup: 40, Measure: 40}, phases); d != "" {
		t.Errorf("phases (-want +got):\n%s", d)
	}

	if c.Summary == nil {
		t.Fatal("no summary")
	}
	s := *c.Summary
	s.JSON = nil
	if d := cmp.Diff(Summary{RunID: "20261201T090303Z-10bacb4d", Total: 40, Successful: 40, Elapsed: 17.823767788}, s); d != "" {
		t.Errorf("summary (-want +got):\n%s", d)
	}
	var sj struct {
		Results map[string]any `json:"results"`
		Run     map[string]any `json:"run"`
	}
	if err := json.Unmarshal(c.Summary.JSON, &sj); err != nil {
		t.Fatalf("summary JSON: %v", err)
	}
	if sj.Results["total_requests"] != 40.0 || sj.Run["run_id"] != "20261201T090303Z-10bacb4d" {
		t.Errorf("summary JSON results %v run %v", sj.Results, sj.Run)
	}
}

// The measured records match, row by row, the CSV lmbench 0.1 exported
// from the same journal: every field is decoded where 0.1 had it.
func TestReadJournalV1MatchesItsCSV(t *testing.T) {
	t.Parallel()
	c, err := ReadJournal(filepath.Join("testdata", "v1-complete.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join("testdata", "v1-complete.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(bufio.NewReader(f)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	var measured []Record
	for _, r := range c.Records {
		if r.Phase == Measure {
			measured = append(measured, r)
		}
	}
	if len(measured) != len(rows)-1 {
		t.Fatalf("%d measured records, %d CSV rows", len(measured), len(rows)-1)
	}
	num := func(row []string, name string) float64 {
		t.Helper()
		v, err := strconv.ParseFloat(row[col[name]], 64)
		if err != nil {
			t.Fatalf("column %s: %v", name, err)
		}
		return v
	}
	secs := func(tm time.Time) float64 {
		if tm.IsZero() {
			return 0
		}
		return float64(tm.UnixNano()) / 1e9
	}
	for i, r := range measured {
		row := rows[i+1]
		if row[col["request_id"]] != r.RequestID || row[col["successful"]] != map[bool]string{true: "True", false: "False"}[r.Success] ||
			row[col["error"]] != r.Error || row[col["phase"]] != r.Phase.String() ||
			row[col["tag_doc"]] != r.Tags["doc"] || row[col["tag_query"]] != r.Tags["query"] {
			t.Errorf("row %d %v, record %+v", i+1, row, r)
		}
		for name, v := range map[string]float64{"ttft": r.TTFT, "request_latency": r.Latency, "decode_speed": r.DecodeSpeed,
			"inter_token_latency": r.ITL, "num_input_tokens": float64(r.InputTokens), "num_output_tokens": float64(r.OutputTokens),
			"cached_tokens": float64(r.CachedTokens)} {
			if got := num(row, name); got != v {
				t.Errorf("row %d (%s): %s = %v in the CSV, %v in the journal", i+1, r.RequestID, name, got, v)
			}
		}
		// Times: the CSV has float seconds (about 0.2 µs resolution at this epoch).
		for name, tm := range map[string]time.Time{"submit_time": r.Submit, "first_token_time": r.FirstToken,
			"finish_time": r.Finish, "scheduled_time": r.Scheduled} {
			if got := num(row, name); math.Abs(got-secs(tm)) > 1e-6 {
				t.Errorf("row %d (%s): %s = %v in the CSV, %v in the journal", i+1, r.RequestID, name, got, secs(tm))
			}
		}
	}
}

func TestReadJournalV1Interrupted(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "v1-interrupted.jsonl")
	c, err := ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Torn || c.Summary != nil || c.Version != 1 {
		t.Errorf("torn %v, summary %+v, version %d; want true, nil, 1", c.Torn, c.Summary, c.Version)
	}
	if n := requestLines(t, path); len(c.Records) != n || n != 50 {
		t.Errorf("%d records, want %d (the complete request lines; 50)", len(c.Records), n)
	}
	if c.Run.ID != "20261201T090321Z-001f409f" || c.Run.Workload != "multi-round-chat" ||
		!cmp.Equal(c.Run.TagKeys, []string{"session", "round"}) || !json.Valid(c.Run.Config) {
		t.Errorf("run %+v", c.Run)
	}
	last := c.Records[len(c.Records)-1]
	if last.RequestID != "s9_r9" || last.Seq != 50 || last.Tags["session"] != "9" || last.ITL != 0.010004577 {
		t.Errorf("last complete record %+v", last)
	}
}

// The v2 record, byte for byte: the format docs/results-schema.md and
// other readers rely on (fields in a fixed order, tags sorted).
func TestAppendJSONFormat(t *testing.T) {
	t.Parallel()
	r := Record{RunID: "r1", Workload: "w", Phase: Warmup, RequestID: "q<1>&", Tags: map[string]string{"b": "2", "a": "1\n"},
		Success: false, Error: `HTTP 500: "x"`, TTFT: -1, Latency: math.Inf(1), DecodeSpeed: math.NaN(), ITL: 1e-7,
		InputTokens: 10, OutputTokens: 0, CachedTokens: 3, Scheduled: time.Unix(1, 5), ExplicitSchedule: true,
		Submit: time.Unix(2, 0), Seq: 9, Chunks: 4, UsageOutputTokens: 7, ChunkOffsetsUs: []int64{0, 12, 1234567},
		ChunkOffsetsTruncated: true, FinishReason: `len"gth`, ResponseID: "id\n<1>", ResponseModel: "org/m"}
	want := `{"run_id":"r1","workload":"w","phase":"warmup","request_id":"q<1>&","tags":{"a":"1\n","b":"2"},` +
		`"success":false,"error":"HTTP 500: \"x\"","ttft_s":-1,"latency_s":null,"decode_speed":null,"itl_s":1e-07,` +
		`"input_tokens":10,"output_tokens":0,"cached_tokens":3,"scheduled_unix_ns":1000000005,"explicit_schedule":true,` +
		`"submit_unix_ns":2000000000,"first_token_unix_ns":0,"finish_unix_ns":0,"seq":9,` +
		`"chunks":4,"usage_output_tokens":7,"chunk_offsets_us":[0,12,1234567],"chunk_offsets_truncated":true,` +
		`"finish_reason":"len\"gth","response_id":"id\n<1>","response_model":"org/m"}`
	prefix := []byte("keep:")
	got := AppendJSON(prefix, &r)
	if d := cmp.Diff("keep:"+want, string(got)); d != "" {
		t.Errorf("AppendJSON (-want +got):\n%s", d)
	}
	if got := string(AppendJSON(nil, &Record{})); !json.Valid([]byte(got)) || !strings.Contains(got, `"tags":{}`) ||
		!strings.Contains(got, `"chunk_offsets_us":[],`) {
		t.Errorf("zero record: %s", got)
	}
}

func TestAppendJSONIsValidJSON(t *testing.T) {
	t.Parallel()
	strs := []string{"", "plain", `"quoted"`, `back\slash`, "nl\ncr\rtab\t", "ctrl \x00\x01\x1f\x7f", "\u2028\u2029",
		"ünï 日本 🦀", "bad utf-8 \xff\xfe", "cut \xe6\x97", "<script>&amp;</script>", "\ufffd"}
	in, _ := journalRecords()
	for _, s := range strs {
		r := fullRecord(1)
		r.RunID, r.Workload, r.RequestID, r.Error = s, s, s, s
		r.Tags = map[string]string{s: s, "k" + s: "v"}
		in = append(in, r)
	}
	for _, r := range in {
		b := AppendJSON(nil, &r)
		if !json.Valid(b) {
			t.Errorf("not valid JSON: %s", b)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil || len(m) != 27 {
			t.Errorf("%d fields, %v: %s", len(m), err, b)
		}
	}
}

// wantString is what a string reads back as: itself when valid UTF-8,
// else with each invalid byte replaced by U+FFFD (as encoding/json does).
func wantString(s string) string { return string([]rune(s)) }

func FuzzAppendJSON(f *testing.F) {
	f.Add("20261201T090303Z-10bacb4d", "long-doc-qa", "doc3_q1", "", "doc", "3")
	f.Add(`"`, `\`, "\n\r\t", "HTTP 503: \"overloaded\"\n", "ünï", "日本 🦀")
	f.Add("\x00\x1f\x7f", "\u2028", "\xff", "\xe6\x97", "", "")
	f.Add("<>&", "\ufffd", "a\x80b", "\xed\xa0\x80", "k\"", "v\\")
	f.Fuzz(func(t *testing.T, runID, workload, requestID, errMsg, tagKey, tagValue string) {
		r := fullRecord(7)
		r.RunID, r.Workload, r.RequestID, r.Error = runID, workload, requestID, errMsg
		r.Tags = map[string]string{"doc": "7"}
		r.Tags[tagKey] = tagValue
		b := AppendJSON(nil, &r)
		if !json.Valid(b) {
			t.Fatalf("not valid JSON: %q", b)
		}
		got, err := decodeRecord(JournalVersion, b)
		if err != nil {
			t.Fatalf("decoding %q: %v", b, err)
		}
		want := r
		want.RunID, want.Workload, want.RequestID, want.Error = wantString(runID), wantString(workload), wantString(requestID), wantString(errMsg)
		want.Tags = map[string]string{"doc": "7"}
		want.Tags[wantString(tagKey)] = wantString(tagValue)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("round trip of %q (-want +got):\n%s", b, d)
		}
	})
}

func TestReadJournalOpenErrorIsNotExist(t *testing.T) {
	t.Parallel()
	_, err := ReadJournal(filepath.Join(t.TempDir(), "none.jsonl"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %v, want one wrapping os.ErrNotExist", err)
	}
}

// BenchmarkJournalAppend is the journal's cost per finished request on
// the host's loop: Append of a typical record, then Flush.
func BenchmarkJournalAppend(b *testing.B) {
	j, err := CreateJournal(filepath.Join(b.TempDir(), JournalName), testRun())
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close(nil)
	r := Record{RunID: "20261201T090303Z-10bacb4d", Workload: "long-doc-qa", Phase: Measure, RequestID: "doc10_q0",
		Tags: map[string]string{"doc": "10", "query": "0"}, Success: true, TTFT: 0.002322083, Latency: 1.273009734,
		DecodeSpeed: 100.73285901477608, ITL: 0.01000442, InputTokens: 199, OutputTokens: 128, CachedTokens: 192,
		Scheduled: t0, Submit: t0.Add(584561), FirstToken: t0.Add(2906644), Finish: t0.Add(1273594295), Seq: 41,
		Chunks: 128, UsageOutputTokens: 128, FinishReason: "length", ResponseID: "chatcmpl-8f0c2d3e9a1b4c5d", ResponseModel: "m-7b"}
	for i := range 128 { // a typical answer's chunk offsets, 10 ms apart
		r.ChunkOffsetsUs = append(r.ChunkOffsetsUs, 2322+int64(i)*10004)
	}
	b.SetBytes(int64(len(AppendJSON(nil, &r))))
	b.ReportAllocs()
	for b.Loop() {
		if err := j.Append(&r); err != nil {
			b.Fatal(err)
		}
		if err := j.Flush(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanJournal is reading a journal back per request (lmbench
// export, report, compare): 1,000 typical records of 128 chunks each.
func BenchmarkScanJournal(b *testing.B) {
	path := filepath.Join(b.TempDir(), JournalName)
	j, err := CreateJournal(path, testRun())
	if err != nil {
		b.Fatal(err)
	}
	r := fullRecord(1)
	r.ChunkOffsetsUs = nil
	for i := range 128 {
		r.ChunkOffsetsUs = append(r.ChunkOffsetsUs, 2322+int64(i)*10004)
	}
	for range 1000 {
		if err := j.Append(&r); err != nil {
			b.Fatal(err)
		}
	}
	if err := j.Close(nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if _, err := ScanJournal(path, func(*Record) error { n++; return nil }); err != nil || n != 1000 {
			b.Fatal(n, err)
		}
	}
}
