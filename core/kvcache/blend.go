package kvcache

import (
	"fmt"
	"math"

	"github.com/lmbench/lmbench/core/report"
)

// Where the ledger's block size came from (Config.BlockSizeFrom).
const (
	BlockFromFlag    = "--block-size"
	BlockFromStatus  = "/status"
	BlockFromBuiltin = "the built-in engine"
	BlockFromDefault = "default"
)

// blendExpectation sums a phase's requests that declared non-prefix
// reuse (protocol.TierBlend).
type blendExpectation struct {
	requests         int
	expected, cached int64
	short            int // reported less than expected minus a block
}

func (b *blendExpectation) observe(aligned, cached, blockSize int64) {
	b.requests++
	b.expected += aligned
	b.cached += cached
	if cached < aligned-blockSize {
		b.short++
	}
}

// blendCheck sets the blend reuse the workload declared beside the
// engine's blended-token counter over the phases that declared it; nil
// when none was declared. Without the counter (counters false, or an
// engine without one) Measured is NaN.
func blendCheck(declared [2]expectation, engine [2]*report.EnginePhase, counters bool) *report.BlendCheck {
	var c report.BlendCheck
	measured, known := 0.0, counters
	for i, d := range declared {
		b := d.blend
		if b.requests == 0 {
			continue
		}
		c.Requests += b.requests
		c.Expected += b.expected
		c.Short += b.short
		if v := engine[i].BlendHits; counters && !math.IsNaN(v) {
			measured += v
		} else {
			known = false
		}
	}
	if c.Requests == 0 {
		return nil
	}
	c.Measured = math.NaN()
	if known {
		c.Measured, c.Source = measured, blendSeries
	}
	return &c
}

// blendSeries is the counter of blended tokens lmbench reads: the built-in
// engine's. LMCache publishes no counter of blended tokens apart from its
// prefix hits, so on it the check falls back to the requests' cached
// tokens.
const blendSeries = "lmbench_sim:kv_blend_hit_tokens_total"

// blendVerdict is the warning when the workload expected non-prefix reuse
// and none was measured, "" otherwise.
func blendVerdict(c *report.BlendCheck, workload string) string {
	if c == nil || c.Expected == 0 {
		return ""
	}
	const fix = "start the engine with blending on (LMCache: enable_blending; the built-in engine: --sim-blend)"
	switch {
	case !math.IsNaN(c.Measured) && c.Measured == 0:
		return fmt.Sprintf("non-prefix reuse expected but none measured (blend inactive): %d %s requests expected %d "+
			"tokens of blended reuse and the engine's %s did not rise; %s", c.Requests, workload, c.Expected, c.Source, fix)
	case math.IsNaN(c.Measured) && c.Short == c.Requests:
		return fmt.Sprintf("non-prefix reuse expected but none measured (blend inactive?): %d %s requests expected %d "+
			"tokens of blended reuse, the engine has no blend counter and every one of them reported more than a block "+
			"fewer cached tokens than expected; %s", c.Requests, workload, c.Expected, fix)
	}
	return ""
}
