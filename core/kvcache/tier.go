package kvcache

import (
	"fmt"
	"math"

	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// tierExpectation is what a phase's requests that named one tier
// expected.
type tierExpectation struct {
	requests int
	expected int64
}

// addTier counts a request's aligned expected reuse under the tier it
// named (gpu, cpu, disk; blend is counted apart, "" not at all).
func (e *expectation) addTier(tier string, aligned int64) {
	switch tier {
	case protocol.TierGPU, protocol.TierCPU, protocol.TierDisk:
	default:
		return
	}
	if aligned <= 0 {
		return
	}
	if e.tiers == nil {
		e.tiers = map[string]tierExpectation{}
	}
	t := e.tiers[tier]
	t.requests++
	t.expected += aligned
	e.tiers[tier] = t
}

// tierHits is what the engine's counters say one tier served in a phase,
// and the counter's name; NaN when the engine cannot tell. The GPU tier is
// the engine's own prefix cache; the CPU and disk tiers are a KV
// connector's (LMCache's), which vLLM and LMCache count together: a
// request that targets the CPU tier is judged by the connector's hits,
// whichever of its tiers served them.
func tierHits(tier string, p report.EnginePhase) (float64, string) {
	if tier == protocol.TierGPU {
		return p.PrefixHits, "prefix-cache hit counter"
	}
	switch {
	case !math.IsNaN(p.ExternalHits):
		return p.ExternalHits, "vllm:external_prefix_cache_hits_total"
	case !math.IsNaN(p.LMCacheHits):
		return p.LMCacheHits, "lmcache:num_hit_tokens_total"
	}
	return math.NaN(), ""
}

// tierVerdicts flag each tier that requests targeted in a phase where the
// engine's counters for it did not rise.
func tierVerdicts(declared [2]expectation, engine [2]report.EnginePhase, workload string) []string {
	var out []string
	for i, d := range declared {
		name := []string{"warmup", "measured"}[i]
		for _, tier := range []string{protocol.TierGPU, protocol.TierCPU, protocol.TierDisk} {
			t, ok := d.tiers[tier]
			if !ok {
				continue
			}
			hits, series := tierHits(tier, engine[i])
			if math.IsNaN(hits) || hits > 0 {
				continue
			}
			out = append(out, fmt.Sprintf("%d %s requests of %s targeted the %s tier (%d tokens expected) but the engine's %s "+
				"did not rise in that phase: the reuse came from elsewhere or not at all", t.requests, name, workload, tier,
				t.expected, series))
		}
	}
	return out
}
