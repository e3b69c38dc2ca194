package htmlreport

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/lmbench/lmbench/core/analysis"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/stats"
	"github.com/lmbench/lmbench/core/sweep"
)

//go:embed report.html.tmpl
var pageTemplate string

//go:embed report.css
var pageCSS string

//go:embed report.js
var pageJS string

var page = template.Must(template.New("report").Parse(pageTemplate))

// Options tune a report.
type Options struct {
	// Compare tunes the comparison section (runs 2 and on against run 1).
	Compare analysis.Options
	// Version is lmbench's, written in the page's footer.
	Version string
	// Sweeps are sweeps to draw (sweep.Load), each a section before the
	// runs'.
	Sweeps []*sweep.Loaded
}

// Write writes the report of runs as one self-contained HTML page: every
// style and script inline, the charts inline SVG, nothing fetched. With
// two runs or more, a comparison section sets each against the first.
func Write(w io.Writer, runs []*analysis.Run, opt Options) error {
	if len(runs) == 0 && len(opt.Sweeps) == 0 {
		return fmt.Errorf("no run or sweep to report")
	}
	var comps []analysis.Comparison
	if len(runs) > 1 {
		comps = analysis.CompareAll(runs, opt.Compare)
	}
	return WriteWith(w, runs, comps, opt)
}

// WriteWith is Write with the comparisons computed already (lmbench
// compare's, so the page and the terminal show the same intervals).
func WriteWith(w io.Writer, runs []*analysis.Run, comps []analysis.Comparison, opt Options) error {
	doc := document{CSS: template.CSS(pageCSS), JS: template.JS(pageJS), Version: opt.Version}
	for _, c := range Palette {
		doc.Palette = append(doc.Palette, fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B))
	}
	for i, r := range runs {
		doc.Runs = append(doc.Runs, runHead{Letter: analysis.Letter(i), Name: r.Name(), Source: r.Source, Workload: r.Header.Workload, Line: analysis.RunLine(r)})
	}
	for i, sw := range opt.Sweeps {
		sec, err := newSweepSection(i+1, sw)
		if err != nil {
			return err
		}
		doc.Sweeps = append(doc.Sweeps, sec)
	}
	if len(comps) > 0 {
		cs := &compareSection{}
		for ci, c := range comps {
			cs.Tables = append(cs.Tables, compareTable(c, analysis.Letter(ci+1)))
		}
		figs, err := figures("cmp", ComparePanels(runs, comps))
		if err != nil {
			return err
		}
		cs.Figures = figs
		cs.Resamples, cs.Seed = comps[0].Resamples, comps[0].Seed
		doc.Compare = cs
	}
	for i, r := range runs {
		sec, err := runSection(analysis.Letter(i), r)
		if err != nil {
			return err
		}
		doc.Sections = append(doc.Sections, sec)
	}
	return page.Execute(w, doc)
}

type document struct {
	CSS      template.CSS
	JS       template.JS
	Palette  []string // JSON-encoded by the template in the script
	Version  string
	Runs     []runHead
	Sweeps   []sweepSection
	Compare  *compareSection
	Sections []section
}

type runHead struct{ Letter, Name, Source, Workload, Line string }

type compareSection struct {
	Tables    []compareTab
	Figures   []figure
	Resamples int
	Seed      uint64
}

type compareTab struct {
	Title      string
	ConfigDiff []string
	Table      table
	Pairing    []string
	Answers    []table
}

type section struct {
	Letter, Name, Status string
	Tables               []table
	Groups               []figureGroup
	Config               table
}

type figureGroup struct {
	Title   string
	Figures []figure
}

// table is one HTML table; a row shorter than Head spans the rest.
type table struct {
	Title string
	Note  string
	Head  []string
	Rows  [][]string
	Empty string
	// Warnings are verdicts to highlight; OK is a line saying none was
	// raised.
	Warnings []string
	OK       string
}

type figure struct {
	ID, Title, Caption, Empty string
	Points                    int
	SVG                       template.HTML
}

// figures renders panels, their ids prefixed (a page holds several runs).
func figures(prefix string, ps []Panel) ([]figure, error) {
	var out []figure
	for _, p := range ps {
		f := figure{ID: prefix + "-" + p.ID, Title: p.Title, Caption: p.Caption, Empty: p.Empty, Points: p.Points()}
		if f.Empty == "" && f.Points == 0 {
			f.Empty = "no data"
		}
		if f.Empty == "" {
			svg, err := Render(p)
			if err != nil {
				return nil, err
			}
			f.SVG = template.HTML(svg) // produced by our renderer from numbers and our own labels, escaped by svgo
		}
		out = append(out, f)
	}
	return out, nil
}

func runSection(letter string, r *analysis.Run) (section, error) {
	s := section{Letter: letter, Name: r.Name(), Status: r.StatusText()}
	s.Tables = append(s.Tables, runTable(r), metricsTable(r), cacheTable(r))
	s.Tables = append(s.Tables, blockTables(r)...)
	s.Tables = append(s.Tables, failureTables(r)...)
	s.Tables = append(s.Tables, overheadTable(r))
	for _, g := range RunGroups(r) {
		figs, err := figures(letter, g.Panels)
		if err != nil {
			return s, err
		}
		s.Groups = append(s.Groups, figureGroup{Title: g.Title, Figures: figs})
	}
	s.Config = table{Title: "Configuration", Note: "The run's resolved configuration as its journal recorded it (--export-config's keys).", Head: []string{"key", "value"}}
	for _, f := range r.Config() {
		s.Config.Rows = append(s.Config.Rows, []string{f.Key, f.Value})
	}
	if len(s.Config.Rows) == 0 {
		s.Config.Empty = "the journal records no configuration"
	}
	return s, nil
}

func runTable(r *analysis.Run) table {
	res := r.Summary.Results
	t := table{Title: "Run"}
	add := func(k, v string) { t.Rows = append(t.Rows, []string{k, v}) }
	add("status", r.StatusText())
	add("run id", r.Header.ID)
	add("workload", r.Header.Workload)
	add("model", orNA(r.Header.Model))
	add("started", r.Start().UTC().Format("2006-01-02 15:04:05 MST"))
	add("lmbench", orNA(r.Summary.Version))
	add("source", r.Source)
	add("summary from", r.SummaryFrom)
	if r.Torn {
		add("journal", "its last line was cut short and is ignored")
	}
	add("measured requests", fmt.Sprintf("%d (%d successful, %d failed)", res.TotalRequests, res.SuccessfulRequests, res.FailedRequests))
	add("elapsed (measured phase)", analysis.Num(res.ElapsedTime)+" s")
	add("input throughput", ptrNum(res.InputThroughput)+" tok/s")
	add("output throughput", ptrNum(res.OutputThroughput)+" tok/s")
	return t
}

// metricKeys are the summary's distributions, in the order shown.
var metricKeys = []struct{ key, label string }{
	{"ttft_ms", "TTFT"}, {"tpot_ms", "TPOT"}, {"itl_ms", "ITL (pooled gaps)"}, {"e2e_ms", "E2E"},
	{"ttft_from_scheduled_ms", "TTFT from the scheduled time"}, {"e2e_from_scheduled_ms", "E2E from the scheduled time"},
}

func metricsTable(r *analysis.Run) table {
	t := table{Title: "Latencies (ms)", Note: "The summary's distributions of the successful measured requests; n/a where a figure is not defined."}
	t.Head = []string{"metric", "count", "mean", "std", "median"}
	for _, p := range r.Summary.Percentiles {
		t.Head = append(t.Head, "P"+stats.FormatPercentile(p))
	}
	if r.Summary.Metrics == nil {
		t.Empty = "the summary has no metrics block (written before lmbench 0.2)"
		return t
	}
	for _, k := range metricKeys {
		m, ok := r.Summary.Metrics[k.key]
		if !ok {
			continue
		}
		row := []string{k.label, strconv.Itoa(m.Count), analysis.Num(m.Mean), analysis.Num(m.Std), analysis.Num(m.Median)}
		for _, q := range m.Percentiles {
			row = append(row, analysis.Num(q.Value))
		}
		t.Rows = append(t.Rows, row)
	}
	if r.Summary.ITLPercentiles != "" {
		t.Note += " ITL percentiles: " + r.Summary.ITLPercentiles + "."
	}
	return t
}

func cacheTable(r *analysis.Run) table {
	t := table{Title: "Prefix cache", Note: "Prompt tokens and the cached tokens the engine reported (usage.prompt_tokens_details.cached_tokens), per phase.",
		Head: []string{"phase", "requests", "prompt tokens", "cached tokens", "cached share", "requests with cached tokens"}}
	w, m := CacheOf(r)
	for _, ph := range []struct {
		name string
		c    analysis.CachePhase
	}{{"warm-up", w}, {"measured", m}} {
		t.Rows = append(t.Rows, []string{ph.name, strconv.FormatInt(ph.c.Requests, 10), strconv.FormatInt(ph.c.PromptTokens, 10),
			strconv.FormatInt(ph.c.CachedTokens, 10), sharePtr(ph.c.CachedRatio), strconv.FormatInt(ph.c.RequestsWithCached, 10)})
	}
	return t
}

func failureTables(r *analysis.Run) []table {
	var out []table
	for _, ph := range []record.Phase{record.Warmup, record.Measure} {
		failed, requests, kinds := analysis.FailureGroups(r, ph)
		t := table{Title: fmt.Sprintf("Failures, %s phase", phaseName(ph)), Head: []string{"kind", "count", "example request", "example error"},
			Note: fmt.Sprintf("%d of %d requests failed. Failed requests are counted, never retried or dropped.", failed, requests)}
		for _, k := range kinds {
			label := k.Label
			if k.Kind != "" && k.Kind != k.Label {
				label = k.Kind + ": " + k.Label
			}
			t.Rows = append(t.Rows, []string{label, strconv.FormatInt(k.Count, 10), k.ExampleRequest, k.Example})
		}
		if len(kinds) == 0 {
			t.Empty = "no request failed"
			if requests == 0 {
				t.Empty = "the phase sent no request"
			}
		}
		out = append(out, t)
	}
	return out
}

func overheadTable(r *analysis.Run) table {
	t := table{Title: "Overhead certificate", Head: []string{"figure", "value"}, Note: r.Summary.OverheadText}
	for _, f := range r.Summary.Overhead {
		if f.Key == "verdict.text" {
			continue
		}
		t.Rows = append(t.Rows, []string{f.Key, figure4(f.Value)})
	}
	if len(t.Rows) == 0 {
		t.Empty = "the summary has no overhead certificate (the run was killed, or written before lmbench measured its overhead)"
	}
	return t
}

func compareTable(c analysis.Comparison, b string) compareTab {
	ct := compareTab{Title: fmt.Sprintf("%s against A", b), ConfigDiff: c.ConfigDiff}
	ct.Table = table{Head: []string{"metric", "A", b, "delta", "ratio " + b + "/A", "95% CI of the ratio", ""}}
	for _, row := range c.Rows {
		mark := ""
		if row.Beyond {
			mark = "beyond noise"
		}
		ct.Table.Rows = append(ct.Table.Rows, []string{row.Metric.Label + " (" + row.Metric.Unit + ")", analysis.Num(row.A), analysis.Num(row.B),
			analysis.Signed(row.Delta), analysis.Ratio(row.Ratio), analysis.Interval(row.Lo, row.Hi), mark})
	}
	ct.Answers = answerTables(c.Answers, b)
	p := c.Pairing
	switch {
	case p == nil:
		ct.Pairing = []string{"Per-request pairing: " + c.PairNote}
	default:
		line := fmt.Sprintf("Per-request pairing (same workload and seed): %d requests paired by id", len(p.Pairs))
		if p.OnlyA+p.OnlyB > 0 {
			line += fmt.Sprintf("; unpaired: %d only in A, %d only in %s", p.OnlyA, p.OnlyB, b)
		}
		ct.Pairing = append(ct.Pairing, line+".")
		if len(p.Pairs) > 0 {
			ct.Pairing = append(ct.Pairing,
				fmt.Sprintf("TTFT ratio %s/A per request: median %s (95%% CI %s), P10 %s, P90 %s.", b, analysis.Ratio(p.Median),
					analysis.Interval(p.MedianLo, p.MedianHi), analysis.Ratio(p.P10), analysis.Ratio(p.P90)),
				fmt.Sprintf("Faster in %s: %d of %d (%s); slower: %d; equal: %d.", b, p.Faster, len(p.Pairs),
					analysis.Percent(p.FasterShare()), p.Slower, len(p.Pairs)-p.Faster-p.Slower))
		}
	}
	return ct
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

func ptrNum(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return analysis.Num(*p)
}

func sharePtr(p *float64) string {
	if p == nil || math.IsNaN(*p) {
		return "n/a"
	}
	return analysis.Percent(*p)
}

// figure4 shows a number written with more digits than it means
// (0.0253820000000002) to about four significant digits, null as n/a,
// anything else (integers, booleans, text) as written.
func figure4(v string) string {
	if v == "null" {
		return "n/a"
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !strings.ContainsAny(v, ".eE") {
		return v
	}
	return analysis.Num(f)
}
