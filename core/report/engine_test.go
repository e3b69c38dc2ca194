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
		Reset:    &CacheReset{When: "before-measure", Status: 200, Cleared: "no", Detail: "the probe request hit 48 tokens after the reset"},
		Verdicts: []string{"the reset answered 200 but did not clear the prefix cache"}}
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
