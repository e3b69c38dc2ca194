package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func engineFixture() *EngineMetrics {
	m := NaNPhase()
	m.PrefixQueries, m.PrefixHits, m.PrefixHitRate = 20000, 15000, 0.75
	m.ExternalHits, m.LMCacheRequested, m.LMCacheHits = 3000, 5000, 3000
	m.Preemptions, m.RunningMax, m.WaitingMax, m.KVUsageMax = 2, 8, 3, 0.5
	m.TTFT = EngineDist{Count: 8, Mean: 120, P50: 100, P90: 240, P99: 480}
	w := NaNPhase()
	w.PrefixQueries, w.PrefixHits, w.PrefixHitRate = 8000, 0, 0
	return &EngineMetrics{URL: "http://localhost:8000/metrics", Engine: "vllm", Scrapes: 6, Failed: 1,
		FirstError: "GET http://localhost:8000/metrics: context deadline exceeded", SamplesFile: "bench_metrics.jsonl",
		Warmup: w, Measure: m,
		Notes: []string{"the engine's vllm:prefix_cache_hits_total went down during the measure phase (did it restart?): their deltas are left out"}}
}

// TestEngineSection pins the terminal's engine section and the JSON
// block (testdata/engine.golden, engine.json; -update rewrites them).
func TestEngineSection(t *testing.T) {
	t.Parallel()
	_, _, f := summaryFixture()
	run := Run{ID: "r1", Version: "v", Engine: engineFixture()}
	golden(t, "engine.golden", []byte(engineSection(run.Engine, f)))
	var b bytes.Buffer
	writeObjectTo(&b, withEngineMetrics(nil, run.Engine))
	golden(t, "engine.json", b.Bytes())
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("engine block is not JSON: %v", err)
	}
}

func TestEngineSectionNA(t *testing.T) {
	t.Parallel()
	e := &EngineMetrics{URL: "http://h/metrics", Scrapes: 3, Failed: 3, FirstError: "GET http://h/metrics: 404 Not Found",
		Warmup: NaNPhase(), Measure: NaNPhase()}
	_, _, f := summaryFixture()
	got := engineSection(e, f)
	golden(t, "engine_na.golden", []byte(got))
	var b bytes.Buffer
	writeObjectTo(&b, withEngineMetrics(nil, e))
	var doc struct {
		E struct {
			Engine  *string `json:"engine"`
			Measure struct {
				Hits *float64 `json:"prefix_cache_hits"`
			} `json:"measure"`
		} `json:"engine_metrics"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.E.Engine != nil || doc.E.Measure.Hits != nil {
		t.Errorf("no metrics: engine %v, hits %v; want null, null", doc.E.Engine, doc.E.Measure.Hits)
	}
	if !math.IsNaN(e.Measure.PrefixHits) {
		t.Fatal("fixture")
	}
}

func TestNoEngineBlockWhenOff(t *testing.T) {
	t.Parallel()
	if got := withEngineMetrics([]kv{{"a", 1}}, nil); len(got) != 1 {
		t.Errorf("metrics off: %d members, want the doc unchanged", len(got))
	}
	_, _, f := summaryFixture()
	if engineSection(nil, f) != "" {
		t.Error("metrics off: a terminal section")
	}
}

func writeObjectTo(b *bytes.Buffer, doc []kv) {
	var sb strings.Builder
	writeObject(&sb, doc, 0)
	b.WriteString(sb.String())
}

// TestLedgerSection pins the terminal's cache ledger and its JSON
// (testdata/ledger.golden, ledger.json; -update rewrites them).
func TestLedgerSection(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	l := &CacheLedger{
		Reset: &CacheReset{When: "before-measure", URL: "http://localhost:8000/reset_prefix_cache", Status: 200,
			Cleared: "no", Detail: "the reset answered 200 but did not clear: the probe prompt still hit 400 tokens after it (400 before)"},
		Warmup: LedgerPhase{Requests: 4, Journal: 0, Engine: 0, Difference: 0, Tolerance: 64, Agrees: Agreement(0, 64),
			Declared: 4, Expected: 0},
		Measure: LedgerPhase{Requests: 8, Journal: 3840, Reporting: 8, Engine: nan, Difference: nan, Tolerance: 128,
			Agrees: Agreement(nan, 128), Declared: 8, Expected: 4096, ExpectedMeasured: 3840, Short: 1},
		Verdicts: []string{"the cache reset (before-measure) answered 200 but did not clear the prefix cache: the phase after it started warm"},
	}
	golden(t, "ledger.golden", []byte(ledgerSection(l)))
	var b bytes.Buffer
	writeObjectTo(&b, withCacheLedger(nil, l))
	golden(t, "ledger.json", b.Bytes())

	// The block size's source, the TTFT comparison and the blend check,
	// each when known.
	l.BlockSize, l.BlockSizeFrom = 256, "/status"
	l.TTFTGain = &TTFTGain{HitRequests: 12, ColdRequests: 9, Buckets: 2, HitCachedShare: 0.9, HitTTFT: 101.5, ColdTTFT: 99.25, Ratio: 1.02}
	l.Blend = &BlendCheck{Requests: 9, Expected: 36000, Measured: 0, Source: "lmbench_sim:kv_blend_hit_tokens_total"}
	golden(t, "ledger_full.golden", []byte(ledgerSection(l)))
	l.Blend.Measured, l.Blend.Source = nan, ""
	b.Reset()
	writeObjectTo(&b, withCacheLedger(nil, l))
	golden(t, "ledger_full.json", b.Bytes())
	if !json.Valid(b.Bytes()) {
		t.Fatalf("not JSON:\n%s", b.Bytes())
	}
}

func TestAgreement(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		d, tol float64
		want   string
	}{{0, 0, "yes"}, {-16, 16, "yes"}, {17, 16, "no"}, {-17, 16, "no"}, {math.NaN(), 16, "n/a"}, {3, math.NaN(), "n/a"}} {
		if got := Agreement(tt.d, tt.tol); got != tt.want {
			t.Errorf("Agreement(%v, %v) = %q, want %q", tt.d, tt.tol, got, tt.want)
		}
	}
}
