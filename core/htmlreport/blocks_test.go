package htmlreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lmbench/lmbench/core/analysis"
	"github.com/lmbench/lmbench/core/enginemetrics"
	"github.com/lmbench/lmbench/core/record"
)

// TestEnginePanels checks the engine panels of testdata/mrc-metrics
// (multi-round-chat on the built-in engine, /metrics scraped every 100 ms,
// an SLO) against its bench_metrics.jsonl and summary, read here on their
// own: the gauges are every sample's, and the hit rates integrate to the
// counters' growth over the run.
func TestEnginePanels(t *testing.T) {
	t.Parallel()
	r := load(t, "mrc-metrics")
	f, err := enginemetrics.ReadFile(filepath.Join("testdata", "mrc-metrics", enginemetrics.FileName))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Panel{}
	for _, p := range RunPanels(r) {
		byID[p.ID] = p
	}
	for _, id := range []string{"engine-requests", "engine-kv-usage", "engine-prefix-hit-rate"} {
		p := byID[id]
		if p.Empty != "" || p.Points() == 0 {
			t.Fatalf("%s: empty (%q), want the samples drawn", id, p.Empty)
		}
		if len(p.Marks) != 2 || p.Marks[0].Label != "measured phase starts" || p.Marks[1].Label != "measured phase ends" || p.Marks[0].X >= p.Marks[1].X {
			t.Errorf("%s: marks %v, want the measured phase's start and end", id, p.Marks)
		}
	}
	ok := 0
	var peakRunning, peakKV float64
	for _, s := range f.Samples {
		if s.OK() {
			ok++
			peakRunning = max(peakRunning, s.Snap.Values[enginemetrics.VLLMRunning])
			peakKV = max(peakKV, s.Snap.Values[enginemetrics.VLLMKVUsage])
		}
	}
	if ok < 10 {
		t.Fatalf("testdata/mrc-metrics has %d samples; the test needs a run scraped through", ok)
	}
	q := byID["engine-requests"]
	if len(q.Series) != 2 || len(q.Series[0].XY) != ok || !strings.HasPrefix(q.Series[0].Name, "running") {
		t.Fatalf("requests panel: %d series, first %q with %d points; want running and waiting, one point per sample (%d)", len(q.Series), q.Series[0].Name, len(q.Series[0].XY), ok)
	}
	gotPeak := 0.0
	for _, p := range q.Series[0].XY {
		gotPeak = max(gotPeak, p.Y)
	}
	if gotPeak != peakRunning || peakRunning == 0 {
		t.Errorf("running peaks at %v in the panel, %v in the samples (want equal, above 0)", gotPeak, peakRunning)
	}
	kvPeak := 0.0
	for _, p := range byID["engine-kv-usage"].Series[0].XY {
		kvPeak = max(kvPeak, p.Y)
	}
	if math.Abs(kvPeak-peakKV*100) > 1e-9 {
		t.Errorf("KV usage peaks at %v%%, the samples at %v", kvPeak, peakKV)
	}
	// Σ rate × interval's queries = hits over the run.
	first, last := f.Samples[0].Snap.Values, f.Samples[len(f.Samples)-1].Snap.Values
	hr := byID["engine-prefix-hit-rate"].Series[0]
	if hr.Name != "prefix cache" {
		t.Fatalf("hit-rate series %q", hr.Name)
	}
	queriesAt := map[float64]float64{}
	for _, s := range f.Samples {
		queriesAt[(&view{t0: r.Start()}).sec(s.Time)] = s.Snap.Values[enginemetrics.VLLMPrefixQueries]
	}
	hits := 0.0
	for i := 0; i+1 < len(hr.XY); i += 2 {
		if math.IsNaN(hr.XY[i].Y) { // a break: an interval without a query
			i--
			continue
		}
		a, b := hr.XY[i], hr.XY[i+1]
		if a.Y != b.Y || math.IsNaN(a.Y) {
			t.Fatalf("hit-rate points %v %v are not one interval's pair", a, b)
		}
		hits += a.Y * (queriesAt[b.X] - queriesAt[a.X])
	}
	want := last[enginemetrics.VLLMPrefixHits] - first[enginemetrics.VLLMPrefixHits]
	if want == 0 || math.Abs(hits-want) > 1e-6 {
		t.Errorf("hit rates × queries sum to %v hits, the counter grew by %v (want equal, above 0)", hits, want)
	}
}

// TestBlockTables: the tables of the summary's blocks show its figures,
// and say why when the summary has none.
func TestBlockTables(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := Write(&buf, []*analysis.Run{load(t, "mrc-metrics"), load(t, "mrc")}, Options{Compare: analysis.Options{Resamples: analysis.MinResamples}}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	// From testdata/mrc-metrics's summary (bench_journal.jsonl's last line).
	for _, want := range []string{
		"<h4>Engine metrics per phase</h4>", "<td>prefix-cache hit rate</td><td>0.0%</td>",
		"<td>TTFT</td><td>engine</td><td>20</td>", "<td>TTFT</td><td>lmbench</td><td>20</td>",
		"<h4>Cache ledger</h4>", "<td>agree</td><td>yes</td><td>yes</td>", `<p class="ok">Verdict: nothing flagged.</p>`,
		"<td>warm-up</td><td>2</td><td>116</td><td>116</td><td>0</td><td>0</td>",
		"<td>requested rate (req/s)</td><td>10</td>",
		"<td>ttft</td><td>3</td><td>95.0%</td>", "<td>tpot</td><td>21</td><td>100.0%</td>",
		"19 good requests, goodput 9.40 req/s",
		// testdata/mrc predates the blocks.
		"the summary has no cache_ledger block", "the summary has no goodput block", "the summary has no engine_metrics block",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestEnginePanelsSayWhy: without the engine's samples each engine panel
// says why: no engine_metrics block, an engine that exposed no /metrics,
// a samples file that is not beside the journal.
func TestEnginePanelsSayWhy(t *testing.T) {
	t.Parallel()
	r := load(t, "mrc-metrics")
	var doc map[string]any
	if err := json.Unmarshal(r.SummaryJSON, &doc); err != nil {
		t.Fatal(err)
	}
	em := doc["engine_metrics"].(map[string]any)
	em["engine"], em["first_error"] = nil, "GET http://127.0.0.1:9/metrics: 404 Not Found"
	noMetrics, _ := json.Marshal(doc)
	delete(doc, "engine_metrics")
	noBlock, _ := json.Marshal(doc)

	// The journal alone, copied where bench_metrics.jsonl is not.
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", "mrc-metrics", record.JournalName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, record.JournalName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	moved, err := analysis.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		run  *analysis.Run
		want string
	}{
		{"no /metrics", withSummary(t, r, noMetrics), "the engine exposed no /metrics: GET http://127.0.0.1:9/metrics: 404 Not Found"},
		{"no block", withSummary(t, r, noBlock), "the summary has no engine_metrics block"},
		{"no file", moved, "bench_metrics.jsonl is not beside the journal"},
	} {
		n := 0
		for _, p := range RunPanels(tc.run) {
			if !strings.HasPrefix(p.ID, "engine-") {
				continue
			}
			n++
			if p.Points() != 0 || !strings.Contains(p.Empty, tc.want) {
				t.Errorf("%s: %s has %d points, empty %q; want none and %q", tc.name, p.ID, p.Points(), p.Empty, tc.want)
			}
		}
		if n != 3 {
			t.Errorf("%s: %d engine panels, want 3", tc.name, n)
		}
	}
}

// withSummary is r with another summary.
func withSummary(t *testing.T, r *analysis.Run, summary []byte) *analysis.Run {
	t.Helper()
	c := *r
	c.SummaryJSON = summary
	s, err := analysis.ParseSummary(summary)
	if err != nil {
		t.Fatal(err)
	}
	c.Summary = s
	return &c
}

// TestLedgerVerdictsHighlighted: testdata/ldqa-nocache-metrics (long-doc-qa
// with the built-in engine's prefix cache off) has the ledger's verdicts;
// the page lists each, as the summary words it, in the highlighted box,
// and the table shows the requests that fell short.
func TestLedgerVerdictsHighlighted(t *testing.T) {
	t.Parallel()
	r := load(t, "ldqa-nocache-metrics")
	var doc struct {
		Ledger struct {
			Verdicts []string `json:"verdicts"`
			Measure  struct {
				Short    int `json:"short_requests"`
				Requests int `json:"requests"`
			} `json:"measure"`
		} `json:"cache_ledger"`
	}
	if err := json.Unmarshal(r.SummaryJSON, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Ledger.Verdicts) == 0 || doc.Ledger.Measure.Short == 0 {
		t.Fatalf("testdata/ldqa-nocache-metrics has no verdict or short request; the test needs them: %+v", doc.Ledger)
	}
	var buf bytes.Buffer
	if err := Write(&buf, []*analysis.Run{r}, Options{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	i := strings.Index(page, "<h4>Cache ledger</h4>")
	j := strings.Index(page[max(i, 0):], `<ul class="verdicts">`)
	if i < 0 || j < 0 {
		t.Fatalf("no highlighted verdicts after the cache ledger's title")
	}
	box := page[i+j:]
	box = box[:strings.Index(box, "</ul>")]
	for _, v := range doc.Ledger.Verdicts {
		if !strings.Contains(box, "<li><strong>Warning:</strong> "+xmlEscape(v)+"</li>") {
			t.Errorf("the verdicts box lacks %q:\n%s", v, box)
		}
	}
	if want := fmt.Sprintf("<td>requests short of their expected reuse</td><td>0</td><td>%d</td>", doc.Ledger.Measure.Short); !strings.Contains(page, want) {
		t.Errorf("the page lacks %q", want)
	}
	if strings.Contains(page, "Verdict: nothing flagged.") {
		t.Errorf("the page says nothing was flagged")
	}
}

// TestThinSamples: a long run's scrapes are thinned to every k-th, the
// phase boundaries all kept, the first and last too.
func TestThinSamples(t *testing.T) {
	t.Parallel()
	var in []enginemetrics.Sample
	for i := range 10_001 {
		p := enginemetrics.PointInterval
		if i == 3 {
			p = enginemetrics.PointMeasureStart
		}
		in = append(in, enginemetrics.Sample{Elapsed: float64(i), Point: p})
	}
	out, k := thinSamples(in, 1000)
	if k != 11 || len(out) > 1000+2 || out[0].Elapsed != 0 || out[len(out)-1].Elapsed != 10_000 {
		t.Fatalf("k %d, %d samples from %v to %v", k, len(out), out[0].Elapsed, out[len(out)-1].Elapsed)
	}
	if !slices.ContainsFunc(out, func(s enginemetrics.Sample) bool { return s.Point == enginemetrics.PointMeasureStart }) {
		t.Errorf("the measured phase's start was thinned away")
	}
	if same, k := thinSamples(in[:50], 1000); len(same) != 50 || k != 1 {
		t.Errorf("a short run thinned: %d samples, k %d", len(same), k)
	}
}

// A merged run's shards table: a row per shard; a missing shard, one that
// did not complete and one that started late are each flagged, and a
// run that is not merged has no such table.
func TestShardsTable(t *testing.T) {
	t.Parallel()
	summary := `{"shards":[
		{"index":0,"count":3,"host":"n0","status":"completed","sent_requests":10,"records":10,"lateness_ms":1.5,
		 "clock":{"reference":"barrier http://b","offset_ms":-0.25,"rtt_ms":0.5,"samples":8},"missing":false},
		{"index":1,"count":3,"host":"n1","status":"aborted","reason":"engine unreachable","sent_requests":4,"records":4,"lateness_ms":2500,
		 "clock":{"reference":"local","offset_ms":0,"rtt_ms":0,"samples":0},"missing":false},
		{"index":2,"count":3,"missing":true}]}`
	tabs := blockTables(&analysis.Run{SummaryJSON: json.RawMessage(summary)})
	st := tabs[len(tabs)-1]
	if st.Title != "Shards (a merged run)" || len(st.Rows) != 3 {
		t.Fatalf("last table %q with %d rows", st.Title, len(st.Rows))
	}
	if got := strings.Join(st.Rows[0], "|"); got != "0/3|n0|completed|10|10|-0.25|0.25|1.50" {
		t.Errorf("shard 0's row %q", got)
	}
	if st.Rows[1][6] != "n/a (not measured)" || st.Rows[2][2] != "MISSING" {
		t.Errorf("rows %v", st.Rows)
	}
	warn := strings.Join(st.Warnings, "\n")
	for _, w := range []string{"shard 1/3 aborted: engine unreachable", "shard 1/3 started 2500 ms from the common start", "shard 2/3 is missing"} {
		if !strings.Contains(warn, w) {
			t.Errorf("warnings %q lack %q", warn, w)
		}
	}
	for _, tb := range blockTables(&analysis.Run{SummaryJSON: json.RawMessage(`{}`)}) {
		if strings.HasPrefix(tb.Title, "Shards") {
			t.Error("a run that is not merged has a shards table")
		}
	}
}

// The summary's engine block is the report's first table: what lmbench
// could measure on the engine, and what it could not as warnings.
func TestEngineTable(t *testing.T) {
	t.Parallel()
	summary := `{"engine":{"kind":"ollama","name":"Ollama","version":"0.17.4","detected_from":"GET /api/version",
		"can":["serves one model"],"cannot":["no cached token counts: the cache ledger will use TTFT only"]}}`
	tabs := blockTables(&analysis.Run{SummaryJSON: json.RawMessage(summary)})
	et := tabs[0]
	if et.Title != "Engine" || et.Note != "Ollama 0.17.4 (ollama), from GET /api/version" || len(et.Rows) != 1 {
		t.Fatalf("first table %+v", et)
	}
	if len(et.Warnings) != 1 || !strings.Contains(et.Warnings[0], "no cached token counts") {
		t.Errorf("warnings %q", et.Warnings)
	}
	for _, tb := range blockTables(&analysis.Run{SummaryJSON: json.RawMessage(`{}`)}) {
		if tb.Title == "Engine" {
			t.Error("a summary without an engine block has an engine table")
		}
	}
}
