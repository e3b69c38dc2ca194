package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/core/stats"
)

// engine is how a fake point at a value ends: the share of the requested
// rate it sent and of its requests that were good, or an error.
type engine struct {
	sent, good func(v float64) float64
	fail       func(v float64) *Outcome // nil: the run completes
}

// runner writes, for each point, the bench_summary.json the real run
// would (through core/report) and a two-row bench_results.csv.
func (e engine) runner(t *testing.T, ran *[]PointRun) Runner {
	return func(_ context.Context, p PointRun) Outcome {
		*ran = append(*ran, p)
		if e.fail != nil {
			if out := e.fail(p.Value); out != nil {
				return *out
			}
		}
		if err := os.MkdirAll(p.Dir, 0o755); err != nil {
			t.Fatal(err)
		}
		f := stats.Final{Aggregated: stats.Aggregated{TotalRequests: 10, SuccessfulRequests: 9, FailedRequests: 1}, P50TTFTMs: 2 * p.Value, P99TTFTMs: math.NaN()}
		f.Load = stats.Load{RequestedRate: p.Value, SendRate: p.Value * e.sent(p.Value), CompletionRate: p.Value, Slip: stats.Dist{N: 1}, SlipMax: 1}
		f.Goodput = stats.Goodput{SLO: stats.SLO{TTFT: 100}, Rate: p.Value / 2, All: e.good(p.Value), TTFT: math.NaN(), TPOT: math.NaN(), ITL: math.NaN(), E2E: math.NaN()}
		f.Percentiles = []float64{50, 99}
		f.Load.Slip.Percentiles = []stats.Quantile{{P: 50, Value: 0.5}, {P: 99, Value: 0.3 * p.Value}}
		sum := report.SummaryJSON(report.Config{Workload: "fake"}, report.Run{Status: record.Completed}, f)
		write(t, filepath.Join(p.Dir, "bench_summary.json"), string(sum))
		write(t, filepath.Join(p.Dir, pointResults), fmt.Sprintf("request_id,ttft\nr1,%[1]g\nr2,%[1]g\n", p.Value))
		return Outcome{}
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func all(float64) float64 { return 1 }

// sweep runs spec against e and checks the file it leaves is the result.
func sweep(t *testing.T, spec string, e engine, edit func(*Config)) (res *Result, ran []PointRun, log, dir string) {
	t.Helper()
	s, err := ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	cfg := Config{Spec: s, OutputDir: filepath.Join(t.TempDir(), "out"), MinGood: 0.9, SearchSteps: 3, Log: &logged}
	if edit != nil {
		edit(&cfg)
	}
	res, err = Run(context.Background(), cfg, e.runner(t, &ran))
	if err != nil {
		t.Fatal(err)
	}
	back, err := Read(cfg.OutputDir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res, back); diff != "" {
		t.Errorf("%s read back (-written +read):\n%s", SummaryName, diff)
	}
	for _, p := range ran {
		if want := filepath.Join(cfg.OutputDir, fmt.Sprintf("point-%02d_%s=%s", p.Number, s.Key, FormatValue(p.Value))); p.Dir != want || p.Key != s.Key {
			t.Errorf("point %d ran in %s for %s, want %s for %s", p.Number, p.Dir, p.Key, want, s.Key)
		}
	}
	return res, ran, logged.String(), cfg.OutputDir
}

// values are the points' values, a search point marked with "s".
func values(res *Result) string {
	var out []string
	for _, p := range res.Points {
		v := FormatValue(p.Value)
		if p.Search {
			v += "s"
		}
		out = append(out, v)
	}
	return strings.Join(out, " ")
}

func TestRunReadsEachPointsSummary(t *testing.T) {
	t.Parallel()
	res, _, log, _ := sweep(t, "rate=1,2", engine{sent: all, good: all}, func(c *Config) { c.SLO = "ttft:100" })
	if want := "lmbench sweep: point 1: rate=1\nlmbench sweep: point 2: rate=2\n"; !strings.HasPrefix(log, want) {
		t.Errorf("log %q, want it to start %q", log, want)
	}
	// It ends with the points' table and the best point.
	for _, want := range []string{"lmbench sweep: 2 points of rate", "meets SLO", "best: rate=2 (point 2, point-02_rate=2), the highest that met the SLO ttft:100"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	f := func(v float64) *float64 { return &v }
	yes := true
	want := Point{Number: 2, Value: 2, Dir: "point-02_rate=2", Status: Completed,
		RequestedRate: f(2), AchievedSendRate: f(2), AchievedFraction: f(1), CompletionRate: f(2), Successful: f(9), Failed: f(1),
		P50TTFTMs: f(4), P99SlipMs: f(0.6), GoodputRPS: f(1), GoodShare: f(1), MeetsSLO: &yes}
	if diff := cmp.Diff(want, res.Points[1]); diff != "" {
		t.Errorf("point 2 (-want +got):\n%s", diff)
	}
	// Every point met the SLO: the best is the highest, without a search.
	if !res.Complete || res.StoppedBy != nil || res.Best == nil || res.Best.Value != 2 || *res.SLO != "ttft:100" || res.Flag != "--rate" {
		t.Errorf("result %+v, want complete, not stopped, best 2, SLO ttft:100, flag --rate", res)
	}
}

func TestStopRules(t *testing.T) {
	t.Parallel()
	saturatesFrom := func(at float64) func(float64) float64 {
		return func(v float64) float64 { return map[bool]float64{true: 0.5, false: 1}[v >= at] }
	}
	goodUpTo := func(limit float64) func(float64) float64 {
		return func(v float64) float64 { return map[bool]float64{true: 1, false: 0.25}[v <= limit] }
	}
	tests := []struct {
		name, spec string
		e          engine
		cfg        func(*Config)
		points     string
		stopped    string
		complete   bool
		best       string // the best point's value ("": none)
	}{
		{name: "saturation", spec: "rate=1,2,4,8", e: engine{sent: saturatesFrom(4), good: all},
			points: "1 2 4", stopped: "point 3 saturated: sends reached 50.0% of the requested rate (below 90%)", complete: true},
		{name: "continue past saturation", spec: "rate=1,2,4,8", e: engine{sent: saturatesFrom(4), good: all}, cfg: func(c *Config) { c.Continue = true },
			points: "1 2 4 8", complete: true},
		{name: "no SLO, no verdict", spec: "rate=1,2", e: engine{sent: all, good: goodUpTo(0)}, points: "1 2", complete: true},
		{name: "SLO broken, then the search", spec: "len=20,40,80,160,320", e: engine{sent: all, good: goodUpTo(120)},
			cfg:    func(c *Config) { c.SLO, c.Search, c.SearchSteps, c.Integer = "ttft:100", true, 1, true },
			points: "20 40 80 160 120s", stopped: "point 4 broke the SLO: 25.0% of the requests were good (below 90.0%)", complete: true, best: "120"},
		{name: "integer search rounds down, until no whole value is left", spec: "n=1,4", e: engine{sent: all, good: goodUpTo(2)},
			cfg:    func(c *Config) { c.SLO, c.Search, c.Integer = "ttft:100", true, true },
			points: "1 4 2s 3s", stopped: "point 2 broke the SLO: 25.0% of the requests were good (below 90.0%)", complete: true, best: "2"},
		{name: "fractional search", spec: "rate=1,2", e: engine{sent: all, good: goodUpTo(1.3)},
			cfg:    func(c *Config) { c.SLO, c.Search = "ttft:100", true },
			points: "1 2 1.5s 1.25s 1.375s", stopped: "point 2 broke the SLO: 25.0% of the requests were good (below 90.0%)", complete: true, best: "1.25"},
		{name: "a failed point ends the sweep", spec: "rate=1,2,4", e: engine{sent: all, good: all, fail: func(v float64) *Outcome {
			if v == 2 {
				return &Outcome{Code: 1, Err: errors.New("engine unreachable")}
			}
			return nil
		}}, points: "1 2", stopped: "point 2 ended failed"},
		{name: "an interrupted search point ends the sweep", spec: "rate=1,2", e: engine{sent: all, good: goodUpTo(1), fail: func(v float64) *Outcome {
			if v == 1.5 {
				return &Outcome{Code: 130, Interrupted: true}
			}
			return nil
		}}, cfg: func(c *Config) { c.SLO, c.Search = "ttft:100", true },
			points: "1 2 1.5s", stopped: "point 2 broke the SLO: 25.0% of the requests were good (below 90.0%)", best: "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, _, _, _ := sweep(t, tt.spec, tt.e, tt.cfg)
			stopped, best := "", ""
			if res.StoppedBy != nil {
				stopped = *res.StoppedBy
			}
			if res.Best != nil {
				best = FormatValue(res.Best.Value)
			}
			if got := values(res); got != tt.points || stopped != tt.stopped || res.Complete != tt.complete || best != tt.best {
				t.Errorf("points %q, stopped by %q, complete %v, best %q;\nwant %q, %q, %v, %q", got, stopped, res.Complete, best, tt.points, tt.stopped, tt.complete, tt.best)
			}
		})
	}
}

func TestFailedPoint(t *testing.T) {
	t.Parallel()
	e := engine{sent: all, good: all, fail: func(v float64) *Outcome {
		if v == 2 {
			return &Outcome{Code: 1, Err: errors.New("engine unreachable")}
		}
		return nil
	}}
	res, _, log, _ := sweep(t, "rate=1,2", e, nil)
	p := res.Points[1]
	if p.Status != Failed || p.ExitCode != 1 || p.Error == nil || *p.Error != "engine unreachable" || p.RequestedRate != nil {
		t.Errorf("point 2: %+v, want failed with exit 1, its error and no figures", p)
	}
	if !strings.Contains(log, "lmbench: point 2: engine unreachable\nlmbench sweep: stopping: point 2 ended failed\n") {
		t.Errorf("log %q lacks the point's error and the stop", log)
	}
}

// The combined files: the CSV has every point's rows after its number
// and value, and a Combiner sees the summary as written, each time.
func TestCombinedFiles(t *testing.T) {
	t.Parallel()
	var calls []string
	_, _, _, dir := sweep(t, "rate=1,2", engine{sent: all, good: all}, func(c *Config) {
		c.Combine = func(dir string, r *Result, summary []byte) error {
			b, err := os.ReadFile(filepath.Join(dir, SummaryName))
			if err != nil || !bytes.Equal(b, append(summary, '\n')) {
				t.Errorf("the Combiner's summary is not the file's: %v", err)
			}
			var parts []string
			for _, p := range r.Parts(dir) {
				rel, _ := filepath.Rel(dir, p.Journal)
				parts = append(parts, fmt.Sprintf("%s %s=%s", rel, p.Tags["point"], p.Tags[r.Key]))
			}
			calls = append(calls, fmt.Sprintf("%v %s", r.TagKeys(), strings.Join(parts, ", ")))
			return nil
		}
	})
	want := []string{
		"[point rate] point-01_rate=1/" + record.JournalName + " 1=1",
		"[point rate] point-01_rate=1/" + record.JournalName + " 1=1, point-02_rate=2/" + record.JournalName + " 2=2",
		"[point rate] point-01_rate=1/" + record.JournalName + " 1=1, point-02_rate=2/" + record.JournalName + " 2=2",
	}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("Combiner calls (-want +got):\n%s", diff)
	}
	b, err := os.ReadFile(filepath.Join(dir, ResultsName))
	if err != nil {
		t.Fatal(err)
	}
	if want := "point,rate,request_id,ttft\n1,1,r1,1\n1,1,r2,1\n2,2,r1,2\n2,2,r2,2\n"; string(b) != want {
		t.Errorf("%s:\n%s\nwant\n%s", ResultsName, b, want)
	}
}
