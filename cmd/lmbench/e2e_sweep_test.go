package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/sweep"
)

// sweepArgs are a sweep of random-prefill on the built-in engine.
func sweepArgs(out string, extra ...string) []string {
	return append([]string{"sweep", "--engine-url", "builtin", "--workload", "random-prefill",
		"--rp-request-length", "16", "--tokens-per-gb-kvcache", "1000", "--kv-cache-volume", "1",
		"-q", "--output-dir", out}, extra...)
}

func readSweepSummary(t *testing.T, out string) sweep.Result {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, sweep.SummaryName))
	if err != nil {
		t.Fatal(err)
	}
	var s sweep.Result
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", sweep.SummaryName, err)
	}
	return s
}

// pointComplete checks that a point's directory holds a finished run of n
// measured requests: its summary, and a journal that ends with it.
func pointComplete(t *testing.T, dir string, n int) {
	t.Helper()
	s := readSummaryMap(t, dir)
	if st := s["run"].(map[string]any)["status"]; st != "completed" {
		t.Errorf("%s: status %v, want completed", dir, st)
	}
	if got := s["results"].(map[string]any)["total_requests"]; got != float64(n) {
		t.Errorf("%s: %v requests, want %d", dir, got, n)
	}
	c := readJournal(t, filepath.Join(dir, record.JournalName))
	if len(c.Records) != n || c.Summary == nil {
		t.Errorf("%s: journal has %d records and summary %v, want %d and a summary", dir, len(c.Records), c.Summary != nil, n)
	}
}

// A 4-point sweep writes a directory per point, a combined summary and a
// combined CSV with a point column. --sweep-continue: on a busy machine
// 400 req/s can fall below 90% of its rate, and the ladder would stop
// there (TestSweepStopsAtSaturation tests that rule).
func TestSweepWritesEveryPoint(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	out := t.TempDir()
	const n = 20
	res := lmbench(t, nil, sweepArgs(out, "--rp-num-requests", fmt.Sprint(n), "--sweep", "rp_rate=50:400:x2", "--sweep-continue", "--exporter", "parquet")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	s := readSweepSummary(t, out)
	if !s.Complete || s.Key != "rp_rate" || fmt.Sprint(s.Values) != "[50 100 200 400]" || len(s.Points) != 4 || s.StoppedBy != nil {
		t.Fatalf("summary: complete %v, key %s, values %v, %d points, stopped by %v; want a complete 4-point sweep of rp_rate 50..400",
			s.Complete, s.Key, s.Values, len(s.Points), s.StoppedBy)
	}
	for i, p := range s.Points {
		wantDir := fmt.Sprintf("point-%02d_rp_rate=%s", i+1, sweep.FormatValue(s.Values[i]))
		if p.Number != i+1 || p.Value != s.Values[i] || p.Dir != wantDir || p.Status != "completed" {
			t.Errorf("point %d: %+v, want %s completed", i+1, p, wantDir)
		}
		if p.RequestedRate == nil || *p.RequestedRate != p.Value || p.AchievedSendRate == nil {
			t.Errorf("point %d: requested %v achieved %v, want %v and a figure", i+1, p.RequestedRate, p.AchievedSendRate, p.Value)
		}
		pointComplete(t, filepath.Join(out, p.Dir), n)
	}
	rows := readCSV(t, filepath.Join(out, sweep.ResultsName))
	if len(rows) != 1+4*n || rows[0][0] != "point" || rows[0][1] != "rp_rate" || rows[0][2] != "request_id" {
		t.Fatalf("combined CSV: %d rows, header %v; want %d rows after point, rp_rate, request_id…", len(rows), rows[0], 1+4*n)
	}
	per := map[string]int{}
	for _, r := range rows[1:] {
		per[r[0]+" "+r[1]]++
	}
	if fmt.Sprint(per) != fmt.Sprintf("map[1 50:%d 2 100:%d 3 200:%d 4 400:%d]", n, n, n, n) {
		t.Errorf("rows per point: %v", per)
	}
	checkSweepParquet(t, out, s, n)
}

// sweepRow is the part of a combined Parquet row the sweep tests check.
type sweepRow struct {
	RunID     string  `parquet:"run_id"`
	RequestID string  `parquet:"request_id"`
	Point     *string `parquet:"tag_point,optional"`
	Rate      *string `parquet:"tag_rp_rate,optional"`
}

// checkSweepParquet reads sweep_results.parquet back: n rows for each of
// the summary's points, in point order, each with its point's number,
// swept value and run id (the one in the point's journal), and the sweep's
// summary in the footer.
func checkSweepParquet(t *testing.T, out string, s sweep.Result, n int) {
	t.Helper()
	path := filepath.Join(out, sweep.ParquetName)
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
	rows := make([]sweepRow, pf.NumRows())
	r := parquet.NewGenericReader[sweepRow](pf)
	defer r.Close()
	got, err := r.Read(rows)
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("%s: %v", path, err)
	}
	rows = rows[:got]
	if len(rows) != len(s.Points)*n {
		t.Fatalf("%s: %d rows, want %d (%d points of %d)", path, len(rows), len(s.Points)*n, len(s.Points), n)
	}
	for i, p := range s.Points {
		runID := readJournal(t, filepath.Join(out, p.Dir, record.JournalName)).Run.ID
		for _, row := range rows[i*n : (i+1)*n] {
			if row.Point == nil || *row.Point != fmt.Sprint(p.Number) || row.Rate == nil || *row.Rate != sweep.FormatValue(p.Value) || row.RunID != runID {
				t.Fatalf("%s: row %+v (point %v, rp_rate %v) in point %d's place, want point %d, rp_rate %s, run %s",
					path, row, orNull(row.Point), orNull(row.Rate), p.Number, p.Number, sweep.FormatValue(p.Value), runID)
			}
		}
	}
	var footer sweep.Result
	for _, kv := range pf.Metadata().KeyValueMetadata {
		if kv.Key == "lmbench.summary" {
			if err := json.Unmarshal([]byte(kv.Value), &footer); err != nil {
				t.Fatalf("%s: footer summary: %v", path, err)
			}
		}
	}
	if len(footer.Points) != len(s.Points) || footer.Key != s.Key {
		t.Errorf("%s: footer summary has %d points of %q, want the sweep summary's %d of %q", path, len(footer.Points), footer.Key, len(s.Points), s.Key)
	}
}

func orNull(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// Killed during point 3, a sweep leaves points 1 and 2 complete, and a
// combined summary listing exactly those.
func TestSweepKilledKeepsFinishedPoints(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	out := t.TempDir()
	// 30 requests at 20 req/s: 1.45 s a point.
	cmd, _, stderr := startLmbench(t, nil, sweepArgs(out, "--rp-num-requests", "30", "--sweep", "rp_rate=20,21,22,23", "--exporter", "parquet")...)
	third := filepath.Join(out, "point-03_rp_rate=22", record.JournalName)
	waitFor(t, "point 3 to be under way", func() bool { return journaled(third) >= 3 })
	cmd.Process.Kill()
	cmd.Wait()
	s := readSweepSummary(t, out)
	if len(s.Points) != 2 || s.Complete {
		t.Fatalf("summary after the kill: %d points, complete %v; want the 2 finished\n%s", len(s.Points), s.Complete, stderr)
	}
	for _, p := range s.Points {
		if p.Status != "completed" {
			t.Errorf("point %d: %s", p.Number, p.Status)
		}
		pointComplete(t, filepath.Join(out, p.Dir), 30)
	}
	if rows := readCSV(t, filepath.Join(out, sweep.ResultsName)); len(rows) != 1+2*30 {
		t.Errorf("combined CSV has %d rows, want the 60 of points 1 and 2 and a header", len(rows))
	}
	checkSweepParquet(t, out, s, 30)
}

// The ladder stops at the first point that breaks the SLO, and the search
// bisects between the last point that met it and that one. The engine
// answers prompts of up to 130 words at once and longer ones after 2 s,
// so with a 1 s TTFT limit (margins no busy machine eats) request length
// 80 (72 words) meets it, 160 (152 words) breaks it, and the search's 120
// (112 words) meets it.
func TestSweepStopsAtTheSLOAndSearches(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model"}]}`))
			return
		}
		if !strings.HasSuffix(r.URL.Path, "/completions") {
			http.NotFound(w, r) // no /tokenize, /metrics or /health here
			return
		}
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		if len(strings.Fields(promptOf(body))) > 130 {
			time.Sleep(2 * time.Second)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	out := t.TempDir()
	res := lmbench(t, nil, "sweep", "--engine-url", srv.URL, "--workload", "random-prefill", "--rp-num-requests", "4",
		"--tokens-per-gb-kvcache", "1000", "--kv-cache-volume", "1", "-q", "--output-dir", out,
		"--slo", "ttft:1000", "--sweep", "rp_request_length=20,40,80,160,320", "--sweep-search", "--sweep-search-steps", "1")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	s := readSweepSummary(t, out)
	var got []string
	for _, p := range s.Points {
		got = append(got, fmt.Sprintf("%s search=%v meets=%v", sweep.FormatValue(p.Value), p.Search, p.MeetsSLO != nil && *p.MeetsSLO))
	}
	want := []string{"20 search=false meets=true", "40 search=false meets=true", "80 search=false meets=true",
		"160 search=false meets=false", "120 search=true meets=true"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("points:\n got %v\nwant %v", got, want)
	}
	if s.StoppedBy == nil || !strings.Contains(*s.StoppedBy, "point 4 broke the SLO") {
		t.Errorf("stopped by %v, want point 4 breaking the SLO", s.StoppedBy)
	}
	if s.Best == nil || s.Best.Value != 120 || s.Best.Dir != "point-05_rp_request_length=120" {
		t.Errorf("best %+v, want the search point 120", s.Best)
	}
}

// Bad sweeps are refused before anything is sent.
func TestSweepErrors(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sweep", "rp_rat=1,2"}, "--sweep rp_rat=1,2: no option rp_rat for this workload"},
		{[]string{"--sweep", "rp_rate=4,2"}, "--sweep rp_rate=4,2: the values must ascend, got 2 after 4"},
		{[]string{"--sweep", "rp_rate=1:8:x1"}, "a geometric range needs START above 0 and a FACTOR above 1"},
		{[]string{"--sweep", "rp_num_requests=1.5,2"}, "rp_num_requests takes whole numbers, got 1.5"},
		{[]string{"--sweep", "rp_rate=1,2", "--rp-rate", "3"}, "--rp-rate is swept by --sweep rp_rate=1,2: give it only there"},
		{[]string{"--sweep", "rp_rate=1,2", "--sweep-search"}, "--sweep-search needs --slo"},
		{[]string{"--rp-rate", "3"}, "--sweep KEY=VALUES is required"},
	} {
		out := t.TempDir()
		res := lmbench(t, nil, sweepArgs(out, tc.args...)...)
		if res.code == 0 || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error containing %q", tc.args, res.code, res.stderr, tc.want)
		}
		if entries, _ := os.ReadDir(out); len(entries) != 0 {
			t.Errorf("%v: wrote %d entries to the output directory", tc.args, len(entries))
		}
	}
}

// The ladder stops at the first point that saturates: with one request in
// flight at a time and 20 ms answers, at most about 50 req/s go out, so
// 1,000 req/s is the first point below 90% of its requested rate (5 and
// 10 req/s leave each request 100 ms or more: margins a busy machine
// does not eat).
func TestSweepStopsAtSaturation(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	e := newArrivalEngine(t, func(int) time.Duration { return 20 * time.Millisecond })
	out := t.TempDir()
	res := lmbench(t, nil, "sweep", "--engine-url", e.srv.URL, "--workload", "random-prefill", "--rp-num-requests", "20",
		"--tokens-per-gb-kvcache", "1000", "--kv-cache-volume", "1", "-q", "--output-dir", out,
		"--max-concurrency", "1", "--sweep", "rp_rate=5,10,1000,2000")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	s := readSweepSummary(t, out)
	var got []string
	for _, p := range s.Points {
		got = append(got, fmt.Sprintf("%s saturated=%v", sweep.FormatValue(p.Value), p.Saturated))
	}
	if want := []string{"5 saturated=false", "10 saturated=false", "1000 saturated=true"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("points %v, want %v", got, want)
	}
	if s.StoppedBy == nil || !strings.Contains(*s.StoppedBy, "point 3 saturated") || !s.Complete {
		t.Errorf("stopped by %v, complete %v; want point 3 saturating, a complete sweep", s.StoppedBy, s.Complete)
	}
	if _, err := os.Stat(filepath.Join(out, "point-04_rp_rate=2000")); !os.IsNotExist(err) {
		t.Errorf("point 4 ran after the stop: %v", err)
	}
}
