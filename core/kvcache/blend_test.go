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

// TestBlendVerdict: measured requests that declared blended reuse are set
// beside the engine's blend counter; a counter that did not rise is
// "blend inactive", one that rose is not; without a counter the requests'
// cached tokens decide, and only when every one fell short.
func TestBlendVerdict(t *testing.T) {
	t.Parallel()
	const inactive = "non-prefix reuse expected but none measured (blend inactive"
	for _, tt := range []struct {
		name     string
		counters bool
		blend    float64 // the engine's counter over the measured phase
		cached   int64   // each request's cached tokens
		want     string
		measured float64 // the check's Measured (NaN: none)
	}{
		{"blend inactive", true, 0, 1008, inactive + "): 3 long-doc-permutator requests expected 12288 tokens of " +
			"blended reuse and the engine's lmbench_sim:kv_blend_hit_tokens_total did not rise", 0},
		{"blend active", true, 9600, 1008, "", 9600},
		{"no counter, short", false, 0, 1008, inactive + "?): 3 long-doc-permutator requests expected 12288 tokens", math.NaN()},
		{"no counter, reported", false, 0, 4096, "", math.NaN()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &Run{blockSize: 16}
			var recs []record.Record
			for range 3 {
				r := record.Record{Phase: record.Measure, Success: true, InputTokens: 6000, CachedTokens: tt.cached}
				c.Observe(&r, &runloop.Outgoing{ExpectedCachedTokens: 4100, HasExpectedCached: true, TargetTier: protocol.TierBlend})
				recs = append(recs, r)
			}
			var e *report.EngineMetrics
			if tt.counters {
				e = &report.EngineMetrics{Engine: "vllm", Warmup: report.NaNPhase(), Measure: report.NaNPhase()}
				e.Measure.PrefixHits, e.Measure.ExternalHits, e.Measure.BlendHits = 3024, 0, tt.blend
				e.Warmup.PrefixHits = 0
			}
			var l report.CacheLedger
			if err := judgeLedger(&l, scanOf(recs...), "long-doc-permutator", e, 16, c.expect); err != nil {
				t.Fatal(err)
			}
			got := strings.Join(l.Verdicts, "\n")
			if tt.want == "" && strings.Contains(got, inactive) || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("verdicts %q, want %q", got, tt.want)
			}
			if strings.Contains(got, "found more than a block less cached") {
				t.Errorf("blend requests judged as prefix reuse: %q", got)
			}
			b := l.Blend
			if b == nil || b.Requests != 3 || b.Expected != 3*4096 {
				t.Fatalf("Blend = %+v, want 3 requests expecting %d", b, 3*4096)
			}
			if !(math.IsNaN(tt.measured) && math.IsNaN(b.Measured) || b.Measured == tt.measured) {
				t.Errorf("Measured = %v, want %v", b.Measured, tt.measured)
			}
		})
	}
}
