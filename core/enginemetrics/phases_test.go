package enginemetrics

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
)

func sample(point, phase string, at int, values map[string]float64, hists map[string]Hist) Sample {
	return Sample{Time: time.Unix(int64(at), 0), Point: point, Phase: phase,
		Snap: Snapshot{Values: values, Hists: hists}}
}

func TestPhases(t *testing.T) {
	t.Parallel()
	h := func(cum ...float64) Hist {
		return Hist{Bounds: []float64{0.1, 1}, Cum: cum, Count: cum[len(cum)-1], Sum: cum[len(cum)-1] / 2}
	}
	samples := []Sample{
		sample(PointRunStart, "", 0, map[string]float64{VLLMPrefixHits: 100, VLLMPrefixQueries: 1000, VLLMRunning: 0},
			map[string]Hist{VLLMTTFT: h(0, 0)}),
		sample(PointInterval, Warmup, 1, map[string]float64{VLLMPrefixHits: 150, VLLMPrefixQueries: 1500, VLLMRunning: 4}, nil),
		sample(PointWarmupEnd, "", 2, map[string]float64{VLLMPrefixHits: 200, VLLMPrefixQueries: 2000, VLLMRunning: 0},
			map[string]Hist{VLLMTTFT: h(2, 4)}),
		{Time: time.Unix(3, 0), Point: PointInterval, Phase: Measure, Err: "GET: connection refused"},
		sample(PointMeasureStart, "", 2, map[string]float64{VLLMPrefixHits: 200, VLLMPrefixQueries: 2000, VLLMRunning: 0},
			map[string]Hist{VLLMTTFT: h(2, 4)}),
		sample(PointInterval, Measure, 4, map[string]float64{VLLMPrefixHits: 900, VLLMPrefixQueries: 3000, VLLMRunning: 8}, nil),
		sample(PointInterval, Measure, 5, map[string]float64{VLLMPrefixHits: 950, VLLMPrefixQueries: 3500, VLLMRunning: 2}, nil),
		// The preemption counter appears only now: its delta is unknown.
		sample(PointMeasureEnd, "", 6, map[string]float64{VLLMPrefixHits: 1200, VLLMPrefixQueries: 4000, VLLMRunning: 0,
			VLLMPreemptions: 3}, map[string]Hist{VLLMTTFT: h(5, 10)}),
	}
	ph := Phases(samples)
	w, m := ph[0], ph[1]
	if diff := cmp.Diff(map[string]float64{VLLMPrefixHits: 100, VLLMPrefixQueries: 1000}, w.Counters); diff != "" {
		t.Errorf("warmup counters (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{VLLMPrefixHits: 1000, VLLMPrefixQueries: 2000}, m.Counters); diff != "" {
		t.Errorf("measure counters (-want +got):\n%s", diff)
	}
	if !math.IsNaN(m.Counter(VLLMPreemptions)) {
		t.Errorf("preemptions missing at the start: %v, want NaN", m.Counter(VLLMPreemptions))
	}
	if diff := cmp.Diff(GaugeStats{N: 4, Min: 0, Mean: 2.5, Max: 8, Inside: 2}, m.Gauges[VLLMRunning]); diff != "" {
		t.Errorf("measure running (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(GaugeStats{N: 3, Min: 0, Mean: 4.0 / 3, Max: 4, Inside: 1}, w.Gauges[VLLMRunning]); diff != "" {
		t.Errorf("warmup running (-want +got):\n%s", diff)
	}
	want := Hist{Bounds: []float64{0.1, 1}, Cum: []float64{3, 6}, Count: 6, Sum: 3}
	if diff := cmp.Diff(want, m.Hists[VLLMTTFT]); diff != "" {
		t.Errorf("measure TTFT delta (-want +got):\n%s", diff)
	}
}

func TestPhasesCounterWentDown(t *testing.T) {
	t.Parallel()
	ph := Phases([]Sample{
		sample(PointMeasureStart, "", 0, map[string]float64{VLLMPrefixHits: 500}, nil),
		sample(PointRunEnd, "", 1, map[string]float64{VLLMPrefixHits: 20}, nil), // restarted
	})
	if ph[1].Has(VLLMPrefixHits) || !cmp.Equal(ph[1].Reset, []string{VLLMPrefixHits}) {
		t.Errorf("restarted engine: counters %v, reset %v; want none, [%s]", ph[1].Counters, ph[1].Reset, VLLMPrefixHits)
	}
	if ph[0].Has(VLLMPrefixHits) {
		t.Error("warmup without boundary samples has a delta")
	}
}

// TestScraper: a scraper against a server whose /metrics fails every
// other time keeps every sample in its file, failed ones too, with the
// phase each was taken in, and logs the failure once.
func TestScraper(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile(filepath.Join("testdata", "vllm.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Write(body)
	}))
	defer srv.Close()
	var logs strings.Builder
	path := filepath.Join(t.TempDir(), FileName)
	s, err := New(Config{URL: srv.URL + "/metrics", Path: path, Log: zerolog.New(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	s.Scrape(t.Context(), PointRunStart)
	s.SetPhase(Warmup)
	s.Scrape(t.Context(), PointInterval)
	s.SetPhase("")
	s.Scrape(t.Context(), PointWarmupEnd)
	s.Scrape(t.Context(), PointMeasureStart)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s.Failed() != 2 {
		t.Errorf("Failed() = %d, want 2", s.Failed())
	}
	if got := strings.Count(logs.String(), "scrape failed"); got != 1 {
		t.Errorf("failure logged %d times, want once:\n%s", got, logs.String())
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 5 {
		t.Fatalf("%d lines, want a header and 4 samples", len(lines))
	}
	if lines[0]["schema"] != Schema || lines[0]["url"] != srv.URL+"/metrics" {
		t.Errorf("header %v", lines[0])
	}
	got := func(i int, k string) string { return fmt.Sprint(lines[i][k]) }
	for i, want := range []struct{ point, phase, errPrefix string }{
		{PointRunStart, "<nil>", "<nil>"},
		{PointInterval, Warmup, "GET " + srv.URL + "/metrics: 503"},
		{PointWarmupEnd, "<nil>", "<nil>"},
		{PointMeasureStart, "<nil>", "GET"},
	} {
		if got(i+1, "point") != want.point || got(i+1, "phase") != want.phase || !strings.HasPrefix(got(i+1, "error"), want.errPrefix) {
			t.Errorf("line %d: point %s phase %s error %s; want %+v", i+1, got(i+1, "point"), got(i+1, "phase"), got(i+1, "error"), want)
		}
	}
	if v := lines[1]["values"].(map[string]any)[VLLMPrefixHits]; v != 136000.0 {
		t.Errorf("first sample's %s = %v, want 136000", VLLMPrefixHits, v)
	}
	if h := lines[1]["histograms"].(map[string]any)[VLLMTTFT].(map[string]any); h["count"] != 30.0 {
		t.Errorf("first sample's TTFT histogram %v, want count 30", h)
	}
}

func TestURLFor(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://localhost:8000":        "http://localhost:8000/metrics",
		"http://10.0.0.1:8000/v1":      "http://10.0.0.1:8000/metrics",
		"https://gw.example/vllm/v1/?": "https://gw.example/metrics",
	} {
		if got, err := URLFor(in); err != nil || got != want {
			t.Errorf("URLFor(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if err := CheckURL("localhost:8000/metrics"); err == nil {
		t.Error("CheckURL without a scheme: no error")
	}
}

// TestScraperInterval: Start scrapes on its own, each sample named
// interval and labelled with the phase set at the time, until Close.
func TestScraperInterval(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("vllm:num_requests_running 2\n"))
	}))
	defer srv.Close()
	s, err := New(Config{URL: srv.URL, Interval: time.Millisecond, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	s.SetPhase(Measure)
	s.Start(t.Context())
	deadline := time.Now().Add(10 * time.Second)
	for len(s.Samples()) < 3 {
		if time.Now().After(deadline) {
			t.Fatal("no interval samples after 10s")
		}
		time.Sleep(time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	n := len(s.Samples())
	for _, smp := range s.Samples() {
		if smp.Point != PointInterval || smp.Phase != Measure || smp.Snap.Values[VLLMRunning] != 2 {
			t.Errorf("sample %+v, want an interval sample in the measure phase with running 2", smp)
		}
	}
	time.Sleep(5 * time.Millisecond)
	if got := len(s.Samples()); got != n {
		t.Errorf("%d samples after Close, want %d: scraping went on", got, n)
	}
}
