package htmlreport

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lmbench/lmbench/core/analysis"
	"github.com/lmbench/lmbench/core/sweep"
)

// testdata/sweep is lmbench sweep of multi-round-chat on the built-in
// engine over mrc_qps 5, 10, 20 with an SLO (testdata/README.md).
func loadSweep(t *testing.T) *sweep.Loaded {
	t.Helper()
	s, err := sweep.Load(filepath.Join("testdata", "sweep"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSweepPanelsGolden pins the data behind a sweep's curves.
func TestSweepPanelsGolden(t *testing.T) {
	t.Parallel()
	golden(t, "sweep.panels.json", panelsJSON(t, SweepPanels(loadSweep(t))))
}

// TestSweepPanelsFromThePoints checks the curves against the files
// themselves: sweep_summary.json's rates and each point's own summary's
// latencies, one point per sweep point.
func TestSweepPanelsFromThePoints(t *testing.T) {
	t.Parallel()
	s := loadSweep(t)
	b, err := os.ReadFile(filepath.Join("testdata", "sweep", SweepSummaryName))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Points []struct {
			Dir              string
			RequestedRate    float64 `json:"requested_rate"`
			CompletionRate   float64 `json:"completion_rate"`
			AchievedSendRate float64 `json:"achieved_send_rate"`
			GoodputRPS       float64 `json:"goodput_rps"`
		} `json:"points"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Points) != 3 {
		t.Fatalf("testdata/sweep has %d points, want 3", len(doc.Points))
	}
	byID := map[string]Panel{}
	for _, p := range SweepPanels(s) {
		byID[p.ID] = p
		if p.Empty != "" {
			t.Errorf("%s: empty: %s", p.ID, p.Empty)
		}
		if p.X.Label == "" || p.Y.Label == "" || !strings.Contains(p.X.Label, "(req/s)") {
			t.Errorf("%s: axes %q, %q; want both labelled, x in req/s", p.ID, p.X.Label, p.Y.Label)
		}
	}
	for i, dp := range doc.Points {
		r, err := analysis.Load(filepath.Join("testdata", "sweep", dp.Dir))
		if err != nil {
			t.Fatal(err)
		}
		tpot := r.Summary.Metrics["tpot_ms"]
		got := byID["sweep-tpot"].Series[1].XY[i] // p99
		if got.X != dp.CompletionRate || got.Y != tpot.Percentile(99) || math.IsNaN(got.Y) {
			t.Errorf("point %d: TPOT p99 at %v, want %v ms at %v req/s (the point's summary)", i+1, got, tpot.Percentile(99), dp.CompletionRate)
		}
		if g := byID["sweep-goodput"].Series[0].XY[i]; g.X != dp.RequestedRate || g.Y != dp.GoodputRPS {
			t.Errorf("point %d: goodput at %v, want %v at %v", i+1, g, dp.GoodputRPS, dp.RequestedRate)
		}
		if a := byID["sweep-rate"].Series[0].XY[i]; a.X != dp.RequestedRate || a.Y != dp.AchievedSendRate {
			t.Errorf("point %d: achieved at %v, want %v at %v", i+1, a, dp.AchievedSendRate, dp.RequestedRate)
		}
	}
	var buf bytes.Buffer
	if err := Write(&buf, nil, Options{Sweeps: []*sweep.Loaded{s}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="sweep-1"`, "Sweep: sweep", "3 points over mrc_qps (--mrc-qps), SLO ttft:6,tpot:6", `id="sweep-1-sweep-ttft"`,
		"<td>point-03_mrc_qps=20</td>", "<h4>Points</h4>"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the sweep page lacks %q", want)
		}
	}
}

// TestSweepWithoutRatesOrSLO: a sweep over a key that sets no rate, with
// no SLO, says so on the panels that need them; a point whose run is gone
// keeps its summary's figures and is flagged.
func TestSweepWithoutRatesOrSLO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	doc := `{"key":"max_concurrency","flag":"--max-concurrency","values":[1,2],"slo":null,"min_good_share":0.9,"complete":true,
	"points":[{"point":1,"value":1,"dir":"point-01_max_concurrency=1","status":"completed","requested_rate":null,"completion_rate":5,"achieved_send_rate":5},
	          {"point":2,"value":2,"dir":"point-02_max_concurrency=2","status":"failed","error":"exit 1","requested_rate":null,"completion_rate":null}]}`
	if err := os.WriteFile(filepath.Join(dir, SweepSummaryName), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := sweep.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range SweepPanels(s) {
		switch p.ID {
		case "sweep-goodput", "sweep-rate":
			if !strings.Contains(p.Empty, "no point has a requested rate: max_concurrency (--max-concurrency) does not set one") {
				t.Errorf("%s: empty %q, want why", p.ID, p.Empty)
			}
		default:
			if !strings.Contains(p.Empty, "no point has both a throughput and a") {
				t.Errorf("%s: empty %q, want why (the runs are gone)", p.ID, p.Empty)
			}
		}
	}
	tab := sweepTable(s)
	if len(tab.Rows) != 2 || tab.Rows[1][2] != "failed: exit 1" || len(tab.Warnings) != 2 || !strings.Contains(tab.Warnings[0], "point 1: its run could not be read") {
		t.Errorf("table rows %v, warnings %v", tab.Rows, tab.Warnings)
	}
}
