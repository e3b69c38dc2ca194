package htmlreport

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/analysis"
	"github.com/lmbench/lmbench/core/record"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The runs in testdata are journals of real runs of the built-in engine,
// captured once (testdata/README.md has the commands): long-doc-qa with
// the prefix cache on and off (same seed), and multi-round-chat with
// injected HTTP 500s.
func load(t *testing.T, name string) *analysis.Run {
	t.Helper()
	r, err := analysis.Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", name, d)
	}
}

// panelsJSON is the panels as JSON, one per line: a diff shows which
// chart changed.
func panelsJSON(t *testing.T, ps []Panel) []byte {
	t.Helper()
	var out bytes.Buffer
	out.WriteString("[\n")
	for i, p := range ps {
		pb, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(pb)
		if i+1 < len(ps) {
			out.WriteByte(',')
		}
		out.WriteByte('\n')
	}
	out.WriteString("]\n")
	return out.Bytes()
}

// TestRunPanelsGolden pins the data behind every chart of a run.
func TestRunPanelsGolden(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"ldqa", "mrc", "mrc-metrics", "ldqa-nocache-metrics"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			golden(t, name+".panels.json", panelsJSON(t, RunPanels(load(t, name))))
		})
	}
}

// TestComparePanelsGolden pins the comparison of the cache on (A) and off
// (B): its table, its JSON and the data behind its charts.
func TestComparePanelsGolden(t *testing.T) {
	t.Parallel()
	runs := []*analysis.Run{load(t, "ldqa"), load(t, "ldqa-nocache")}
	comps := analysis.CompareAll(runs, analysis.Options{})
	golden(t, "compare.panels.json", panelsJSON(t, ComparePanels(runs, comps)))
	var text, js bytes.Buffer
	if err := analysis.WriteComparisons(&text, runs, comps, analysis.TextOptions{Pairs: true}); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.txt", text.Bytes())
	if err := analysis.WriteComparisonsJSON(&js, runs, comps, analysis.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.json", js.Bytes())
}

// TestPanelsCoverTheRun checks what the goldens hold against the journal
// itself, so a golden rewritten from a wrong panel does not pass.
func TestPanelsCoverTheRun(t *testing.T) {
	t.Parallel()
	r := load(t, "mrc")
	var ok, failed, measuredOK int
	for _, rec := range r.Records {
		switch {
		case !rec.Success:
			failed++
		case rec.Phase == record.Measure:
			measuredOK++
			ok++
		default:
			ok++
		}
	}
	if failed == 0 {
		t.Fatal("testdata/mrc has no failed request; the test needs some")
	}
	byID := map[string]Panel{}
	for _, p := range RunPanels(r) {
		byID[p.ID] = p
		// testdata/mrc was captured before lmbench read the engine's
		// metrics; TestEnginePanels covers those panels.
		if p.Empty != "" && !strings.HasPrefix(p.ID, "engine-") {
			t.Errorf("panel %s empty: %s", p.ID, p.Empty)
		}
		if p.X.Label == "" || (p.Kind != Forest && p.Y.Label == "") {
			t.Errorf("panel %s: an axis has no label", p.ID)
		}
	}
	for _, id := range []string{"ttft-cdf", "ttft-hist", "tpot-cdf", "tpot-hist", "itl-cdf", "itl-hist", "e2e-cdf", "e2e-hist",
		"ttft-time-phase", "ttft-time-session", "ttft-time-round", "throughput-requests", "throughput-tokens",
		"in-flight", "dispatch-lag", "ttft-by-session", "ttft-by-round", "cache"} {
		if _, ok := byID[id]; !ok {
			t.Errorf("no panel %s", id)
		}
	}
	if cdf := byID["ttft-cdf"].Series[0].XY; len(cdf) != measuredOK+1 || cdf[len(cdf)-1].Y != 1 {
		t.Errorf("TTFT CDF: %d points ending at %v, want %d (one per successful measured request, and the start) ending at 1", len(cdf), cdf[len(cdf)-1].Y, measuredOK+1)
	}
	n := 0
	for _, b := range byID["ttft-hist"].Series[0].Bins {
		n += b.N
	}
	if n != measuredOK {
		t.Errorf("TTFT histogram holds %d requests, want %d", n, measuredOK)
	}
	var finished [2]float64 // successful, failed: requests per second × bin width summed = requests
	thr := byID["throughput-requests"]
	if len(thr.Series) != 2 || thr.Series[1].Name != "failed" {
		t.Fatalf("request throughput series %v, want successful and failed", thr.Series)
	}
	for k, s := range thr.Series {
		for i := 0; i+1 < len(s.XY); i++ {
			finished[k] += s.XY[i].Y * (s.XY[i+1].X - s.XY[i].X)
		}
	}
	if fmt.Sprintf("%.6f %.6f", finished[0], finished[1]) != fmt.Sprintf("%.6f %.6f", float64(ok), float64(failed)) {
		t.Errorf("request throughput integrates to %v successful, %v failed; the journal has %d and %d", finished[0], finished[1], ok, failed)
	}
}

// paletteData counts the SVG elements drawn in a palette colour: the data.
func paletteData(svg []byte) int {
	n := 0
	for _, c := range Palette {
		n += bytes.Count(svg, []byte(fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B)))
	}
	return n
}

func TestRenderEveryKind(t *testing.T) {
	t.Parallel()
	runs := []*analysis.Run{load(t, "ldqa"), load(t, "ldqa-nocache")}
	ps := append(RunPanels(runs[0]), ComparePanels(runs, analysis.CompareAll(runs, analysis.Options{Resamples: analysis.MinResamples}))...)
	ps = append(ps, RunPanels(load(t, "mrc-metrics"))...)
	ps = append(ps, SweepPanels(loadSweep(t))...)
	kinds := map[Kind]bool{}
	for _, p := range ps {
		if p.Empty != "" {
			continue // TestEmptyPanelsSayWhy
		}
		kinds[p.Kind] = true
		svg, err := Render(p)
		if err != nil {
			t.Errorf("%s: %v", p.ID, err)
			continue
		}
		if !bytes.HasPrefix(svg, []byte("<svg")) || !bytes.HasSuffix(bytes.TrimSpace(svg), []byte("</svg>")) {
			t.Errorf("%s: not one svg element: %.80q…", p.ID, svg)
		}
		if got := paletteData(svg); got < len(p.Series) {
			t.Errorf("%s: %d elements in data colours for %d series", p.ID, got, len(p.Series))
		}
		for _, want := range []string{p.Title, p.X.Label} {
			if !bytes.Contains(svg, []byte(xmlEscape(want))) {
				t.Errorf("%s: the SVG lacks %q", p.ID, want)
			}
		}
	}
	for _, k := range []Kind{CDF, Hist, Scatter, Lines, Box, Bars, Forest, Curve} {
		if !kinds[k] {
			t.Errorf("no panel of kind %s rendered", k)
		}
	}
	if _, err := Render(Panel{ID: "x", Empty: "no values"}); err == nil || !strings.Contains(err.Error(), "no values") {
		t.Errorf("rendering an empty panel: %v, want an error saying why it is empty", err)
	}
}

func xmlEscape(s string) string {
	var b bytes.Buffer
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\'':
			b.WriteString("&#39;")
		case '"':
			b.WriteString("&#34;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestPageIsSelfContained: one file, nothing loaded from elsewhere, every
// panel present, the comparison section when there are two runs.
func TestPageIsSelfContained(t *testing.T) {
	t.Parallel()
	runs := []*analysis.Run{load(t, "ldqa"), load(t, "ldqa-nocache"), load(t, "mrc")}
	var buf bytes.Buffer
	if err := Write(&buf, runs, Options{Compare: analysis.Options{Resamples: analysis.MinResamples}, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, bad := range []*regexp.Regexp{regexp.MustCompile(`<script[^>]+src=`), regexp.MustCompile(`<link`),
		regexp.MustCompile(`@import`), regexp.MustCompile(`url\(`), regexp.MustCompile(`<img`), regexp.MustCompile(`href="(https?:)?//`)} {
		if loc := bad.FindStringIndex(page); loc != nil {
			t.Errorf("the page loads something from elsewhere: %q", page[max(loc[0]-40, 0):min(loc[1]+40, len(page))])
		}
	}
	want := []string{`id="compare"`, "B against A", "C against A", "Per-request pairing (same workload and seed): 8 requests paired by id",
		"not paired: the workloads differ (long-doc-qa, multi-round-chat)", "Overhead certificate", "Failures, measured phase", "HTTP 500"}
	for i, r := range runs {
		for _, p := range RunPanels(r) {
			want = append(want, fmt.Sprintf(`id="%s-%s"`, analysis.Letter(i), p.ID))
		}
	}
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
}

// TestEmptyPanelsSayWhy: a run whose every request failed draws no chart
// and says why for each.
func TestEmptyPanelsSayWhy(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := record.Run{ID: "failed", Workload: "w", Started: t0}
	var recs []record.Record
	for i := range 3 {
		s := t0.Add(time.Duration(i) * time.Second)
		recs = append(recs, record.Record{RunID: h.ID, Phase: record.Measure, RequestID: fmt.Sprint(i), Error: "HTTP 500: boom",
			Scheduled: s, Submit: s, Finish: s.Add(time.Millisecond), Seq: int64(i + 1)})
	}
	r, err := analysis.NewRun(h, recs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range RunPanels(r) {
		switch p.ID {
		case "throughput-requests", "throughput-tokens", "in-flight", "dispatch-lag", "cache":
			if p.Empty != "" {
				t.Errorf("%s: empty (%s), but failed requests were sent and finished", p.ID, p.Empty)
			}
		default:
			if p.Empty == "" || p.Points() != 0 {
				t.Errorf("%s: %d points, empty note %q; want none and a note", p.ID, p.Points(), p.Empty)
			}
		}
	}
	var buf bytes.Buffer
	if err := Write(&buf, []*analysis.Run{r}, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "No chart: no values: no measured request succeeded.") {
		t.Errorf("the page does not say why the TTFT chart is missing")
	}
}

// TestKilledRun: a journal without its summary line (the host was killed)
// still gives a report, which says so and has no overhead certificate.
func TestKilledRun(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("testdata", "mrc", record.JournalName))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(bytes.TrimRight(b, "\n"), []byte("\n"))
	if !bytes.Contains(lines[len(lines)-1], []byte(`"kind":"summary"`)) {
		t.Fatalf("the journal's last line is not its summary: %.100s", lines[len(lines)-1])
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, record.JournalName), bytes.Join(lines[:len(lines)-1], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := analysis.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, []*analysis.Run{r}, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"killed: the journal has no summary line; the figures are computed from its records",
		"the summary has no overhead certificate", `id="A-ttft-cdf"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// The panels are the same as the finished run's: they come from the records.
	if d := cmp.Diff(string(panelsJSON(t, RunPanels(load(t, "mrc")))), string(panelsJSON(t, RunPanels(r)))); d != "" {
		t.Errorf("panels of the killed run differ from the finished run's (-finished +killed):\n%s", d)
	}
}
