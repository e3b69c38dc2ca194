package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/sdk/arrival"
)

// arrivalEngine is an OpenAI-compatible server that records when each
// request arrived and how many were in flight at most, and answers with
// one token after delay(prompt index).
type arrivalEngine struct {
	mu          sync.Mutex
	arrivals    []time.Time
	inFlight    int
	maxInFlight int
	delay       func(index int) time.Duration
	srv         *httptest.Server
}

func newArrivalEngine(t *testing.T, delay func(int) time.Duration) *arrivalEngine {
	e := &arrivalEngine{delay: delay}
	e.srv = httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *arrivalEngine) serve(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	if r.URL.Path == "/v1/models" {
		w.Write([]byte(`{"object":"list","data":[{"id":"arrival-model","object":"model"}]}`))
		return
	}
	if !strings.HasSuffix(r.URL.Path, "/completions") {
		http.NotFound(w, r) // no /tokenize, /metrics or /health here
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	e.mu.Lock()
	e.arrivals = append(e.arrivals, now)
	e.inFlight++
	e.maxInFlight = max(e.maxInFlight, e.inFlight)
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.inFlight--
		e.mu.Unlock()
	}()
	if e.delay != nil {
		// random-prefill's prompt k starts "Request k: ".
		idx, _ := strconv.Atoi(strings.TrimSuffix(strings.Fields(promptOf(body))[1], ":"))
		time.Sleep(e.delay(idx))
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n")
	fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":1}}\n\n")
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// seen returns how many requests arrived and the most in flight at once.
func (e *arrivalEngine) seen() (arrived, maxInFlight int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.arrivals), e.maxInFlight
}

// gaps are the engine's inter-arrival rate ((n-1) over the span) and the
// coefficient of variation of its gaps.
func (e *arrivalEngine) gaps() (n int, rate, cv float64) {
	e.mu.Lock()
	ts := slices.Clone(e.arrivals)
	e.mu.Unlock()
	rate, cv = timeGaps(ts)
	return len(ts), rate, cv
}

// timeGaps is the rate (1 / the mean gap) and the gaps' coefficient of
// variation of the times ts, in time order.
func timeGaps(ts []time.Time) (rate, cv float64) {
	ts = slices.Clone(ts)
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	var g []float64
	for i := 1; i < len(ts); i++ {
		g = append(g, ts[i].Sub(ts[i-1]).Seconds())
	}
	var mean, ss float64
	for _, x := range g {
		mean += x
	}
	mean /= float64(len(g))
	for _, x := range g {
		ss += (x - mean) * (x - mean)
	}
	return 1 / mean, math.Sqrt(ss/float64(len(g))) / mean
}

func readSummaryMap(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// The requested rate and the arrival process's burstiness are what the
// run schedules: 400 prompts at 40 req/s, with a fixed seed, so the
// schedule is the same every run. The journal's scheduled send times
// must have the requested rate and the schedule's own coefficient of
// variation, and the schedule's must be the process's (Poisson 1, gamma
// with burstiness 0.5 √2); every request reaches the engine, and the
// summary sets the achieved rate against the requested one. How closely
// the engine's arrivals follow the schedule depends on the machine's load:
// logged, not asserted (scripts/dispatch-lag-bench.sh measures it).
func TestArrivalProcessesReachTheEngine(t *testing.T) {
	needBinaries(t)
	const rate, n, seed = 40.0, 400, 3
	for _, tc := range []struct {
		arrival       string
		burstiness    float64
		cvLow, cvHigh float64
	}{
		{arrival: "poisson", burstiness: 1, cvLow: 0.9, cvHigh: 1.1},
		{arrival: "gamma", burstiness: 0.5, cvLow: math.Sqrt2 - 0.15, cvHigh: math.Sqrt2 + 0.15},
	} {
		t.Run(tc.arrival, func(t *testing.T) {
			e := newArrivalEngine(t, nil)
			out := t.TempDir()
			res := lmbench(t, nil, "run", "--engine-url", e.srv.URL, "--workload", "random-prefill",
				"--rp-rate", fmt.Sprint(rate), "--rp-arrival", tc.arrival, "--rp-burstiness", fmt.Sprint(tc.burstiness),
				"--rp-num-requests", fmt.Sprint(n), "--rp-request-length", "16", "--seed", fmt.Sprint(seed),
				"--tokens-per-gb-kvcache", "1000", "--kv-cache-volume", "1",
				"--no-interactive", "-q", "--json", "--output-dir", out)
			if res.code != 0 {
				t.Fatalf("exit %d\n%s", res.code, res.stderr)
			}
			got, engineRate, engineCV := e.gaps()
			if got != n {
				t.Fatalf("the engine got %d requests, want %d", got, n)
			}
			want := scheduleCV(t, tc.arrival, rate, tc.burstiness, seed, n)
			if want < tc.cvLow || want > tc.cvHigh {
				t.Fatalf("the seed's schedule has gap CV %.3f, want %.2f..%.2f: pick another seed", want, tc.cvLow, tc.cvHigh)
			}
			var scheduled []time.Time
			for _, r := range readJournal(t, filepath.Join(out, record.JournalName)).Records {
				if r.Phase == record.Measure {
					scheduled = append(scheduled, r.Scheduled)
				}
			}
			schedRate, schedCV := timeGaps(scheduled)
			if math.Abs(schedRate-rate)/rate > 0.001 || math.Abs(schedCV-want) > 0.001 {
				t.Errorf("scheduled %.3f req/s, gap CV %.4f; want %v req/s and the schedule's CV %.4f", schedRate, schedCV, rate, want)
			}
			t.Logf("%s: the engine saw %.2f req/s, gap CV %.3f (schedule CV %.3f)", tc.arrival, engineRate, engineCV, want)
			load := readSummaryMap(t, out)["load"].(map[string]any)
			if load["requested_rate"] != rate {
				t.Errorf("requested_rate = %v, want %v", load["requested_rate"], rate)
			}
			if a, ok := load["achieved_send_rate"].(float64); !ok || !(a > 0) {
				t.Errorf("achieved_send_rate = %v, want a figure", load["achieved_send_rate"])
			}
			if slip, _ := load["schedule_slip_ms"].(map[string]any); slip["count"] != float64(n) {
				t.Errorf("schedule slip over %v requests, want %d", slip["count"], n)
			}
		})
	}
}

// scheduleCV is the gap coefficient of variation of the first n due
// times of the seed's schedule (scale-free: random-prefill's rescaling
// to (n-1)/rate leaves it unchanged).
func scheduleCV(t *testing.T, kind string, rate, burstiness float64, seed int64, n int) float64 {
	t.Helper()
	s, err := arrival.New(kind, rate, burstiness, seed)
	if err != nil {
		t.Fatal(err)
	}
	var ts []time.Time
	for k := range n {
		ts = append(ts, time.Unix(0, 0).Add(s.Due(k)))
	}
	_, cv := timeGaps(ts)
	return cv
}

// --max-concurrency caps what is in flight at the engine; requests due
// meanwhile wait, so the achieved rate falls below the requested one and
// the summary (and the log) say so. --slo judges every request: the
// even prompts answer at once and the odd ones after 200 ms, so exactly
// half meet a 100 ms TTFT limit (a margin no loaded machine eats) and all
// meet a 5 s E2E one.
func TestMaxConcurrencyAndGoodput(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	e := newArrivalEngine(t, func(i int) time.Duration {
		if i%2 == 0 {
			return 0
		}
		return 200 * time.Millisecond
	})
	out := t.TempDir()
	const n = 40
	res := lmbench(t, nil, "run", "--engine-url", e.srv.URL, "--workload", "random-prefill",
		"--rp-rate", "200", "--rp-num-requests", fmt.Sprint(n), "--rp-request-length", "16",
		"--max-concurrency", "2", "--slo", "ttft:100 e2e:5000",
		"--tokens-per-gb-kvcache", "1000", "--kv-cache-volume", "1",
		"--no-interactive", "-q", "--json", "--output-dir", out)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	if _, peak := e.seen(); peak != 2 {
		t.Errorf("at most %d requests in flight at the engine, want 2 (the cap, reached)", peak)
	}
	s := readSummaryMap(t, out)
	load := s["load"].(map[string]any)
	// 2 slots, 100 ms a request on average: about 20 req/s of the 200.
	if load["below_requested"] != true || load["warning"] == nil {
		t.Errorf("below_requested %v, warning %v: want true and a warning", load["below_requested"], load["warning"])
	}
	if !strings.Contains(res.stderr, "of the 200 req/s requested") {
		t.Errorf("no warning about the achieved rate in the log:\n%s", res.stderr)
	}
	if slip := load["schedule_slip_ms"].(map[string]any); slip["max"].(float64) < 50 {
		t.Errorf("schedule slip max %v ms: the requests waiting for a slot should show", slip["max"])
	}
	g := s["goodput"].(map[string]any)
	wantSLO := map[string]any{"ttft": 100.0, "tpot": nil, "itl": nil, "e2e": 5000.0}
	if fmt.Sprint(g["slo_ms"]) != fmt.Sprint(wantSLO) {
		t.Errorf("slo_ms = %v, want %v", g["slo_ms"], wantSLO)
	}
	att := g["attainment"].(map[string]any)
	if g["good_requests"] != float64(n/2) || att["ttft"] != 0.5 || att["e2e"] != 1.0 || att["all"] != 0.5 ||
		att["tpot"] != nil || att["itl"] != nil {
		t.Errorf("good %v, attainment %v: want %d good, ttft 0.5, e2e 1, all 0.5, tpot and itl null", g["good_requests"], att, n/2)
	}
	elapsed := s["results"].(map[string]any)["elapsed_time"].(float64)
	if rate := g["goodput_rps"].(float64); math.Abs(rate-float64(n/2)/elapsed) > 1e-9 {
		t.Errorf("goodput %v req/s, want %d good / %v s", rate, n/2, elapsed)
	}
}

// Without --slo the goodput figures are not defined; bad values of the
// load options are refused before anything is sent.
func TestLoadOptionErrors(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	e := newArrivalEngine(t, nil)
	for _, tc := range []struct{ flag, value, want string }{
		{"--slo", "ttft:0", `--slo: "ttft:0": the ttft limit must be a number of milliseconds above 0, got "0"`},
		{"--slo", "latency:5", `--slo: "latency:5": want KEY:MILLISECONDS with KEY one of ttft, tpot, itl, e2e`},
		{"--max-concurrency", "-3", "--max-concurrency: must be between 0 (no cap) and 1048576 requests, got -3"},
	} {
		res := lmbench(t, nil, "run", "--engine-url", e.srv.URL, "--workload", "random-prefill",
			"--tokens-per-gb-kvcache", "1000", "--no-interactive", "-q", "--output-dir", t.TempDir(), tc.flag, tc.value)
		if res.code == 0 || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%s %s: exit %d, stderr %q; want an error containing %q", tc.flag, tc.value, res.code, res.stderr, tc.want)
		}
	}
	if n, _ := e.seen(); n != 0 {
		t.Errorf("%d requests reached the engine; bad options must stop the run first", n)
	}
	out := t.TempDir()
	res := lmbench(t, nil, "run", "--engine-url", e.srv.URL, "--workload", "random-prefill", "--rp-num-requests", "3",
		"--tokens-per-gb-kvcache", "1000", "--kv-cache-volume", "1", "--no-interactive", "-q", "--json", "--output-dir", out)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	s := readSummaryMap(t, out)
	g, load := s["goodput"].(map[string]any), s["load"].(map[string]any)
	if g["good_requests"] != nil || g["goodput_rps"] != nil || load["requested_rate"] != nil || load["below_requested"] != nil {
		t.Errorf("without an SLO or a rate: goodput %v, load %v; want null figures", g, load)
	}
}
