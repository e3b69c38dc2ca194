package kvcache

import (
	"math"
	"strings"
	"testing"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/sdk/host/runloop"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// TestTargetTierVerdict: requests that name the CPU tier are judged by
// the KV connector's counters, those that name the GPU by the engine's
// prefix cache; a tier whose counter did not rise is flagged, one that
// rose is not, and an engine without the counter is not judged.
func TestTargetTierVerdict(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	for _, tt := range []struct {
		name             string
		tier             string
		prefix, external float64
		lmcache          float64
		want             string // "" for none
	}{
		{"cpu tier saw nothing", protocol.TierCPU, 4000, 0, nan,
			"2 measured requests of prefix-suffix-tuner targeted the cpu tier (2048 tokens expected) but the engine's " +
				"vllm:external_prefix_cache_hits_total did not rise"},
		{"cpu tier hit", protocol.TierCPU, 0, 2048, nan, ""},
		{"LMCache alone", protocol.TierDisk, nan, nan, 0, "targeted the disk tier (2048 tokens expected) but the engine's lmcache:num_hit_tokens_total"},
		{"no connector counters", protocol.TierCPU, 4000, nan, nan, ""},
		{"gpu tier saw nothing", protocol.TierGPU, 0, 2048, nan, "targeted the gpu tier (2048 tokens expected) but the engine's prefix-cache hit counter"},
		{"gpu tier hit", protocol.TierGPU, 2048, 0, nan, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &Run{blockSize: 16}
			var recs []record.Record
			for range 2 {
				r := record.Record{Phase: record.Measure, Success: true, InputTokens: 2000, CachedTokens: 1024}
				c.Observe(&r, &runloop.Outgoing{ExpectedCachedTokens: 1030, HasExpectedCached: true, TargetTier: tt.tier})
				recs = append(recs, r)
			}
			e := &report.EngineMetrics{Engine: "vllm", Warmup: report.NaNPhase(), Measure: report.NaNPhase()}
			e.Measure.PrefixHits, e.Measure.ExternalHits, e.Measure.LMCacheHits = tt.prefix, tt.external, tt.lmcache
			var l report.CacheLedger
			if err := judgeLedger(&l, scanOf(recs...), "prefix-suffix-tuner", e, 16, c.expect); err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, v := range l.Verdicts {
				if strings.Contains(v, "targeted the") {
					got = v
				}
			}
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("verdict %q, want %q", got, tt.want)
			}
		})
	}
}
