package host

import (
	"context"
	"errors"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/runloop"
)

// DefaultBlockSize is vLLM's default KV block, in tokens.
const DefaultBlockSize = 16

// cacheRun is what a run does about the engine's KV cache besides
// measuring requests: it reads the engine's /metrics (nil metrics: off),
// resets the prefix cache when --reset-cache asks and checks the reset,
// and at the end sets the journal's cached tokens beside the engine's
// counters (the cache ledger).
type cacheRun struct {
	ctx     context.Context
	metrics *metricsRun
	reset   *ResetPlan
	sender  Sender
	log     zerolog.Logger
	ledger  report.CacheLedger
	// blockSize is the engine's KV block in tokens: the ledger's
	// tolerance per request, and what expected reuse is aligned to.
	blockSize int
	blockFrom string // where blockSize came from (Plan.BlockSizeFrom)
	// expect is what the workload declared of each phase's requests
	// (the expected-reuse capability), by phase: 0 warmup, 1 measure.
	expect [2]expectation
}

// expectation sums a phase's declared reuse beside what it got.
type expectation struct {
	declared                    int
	expected, cached            int64
	short, coldHits, belowBlock int
	// Requests that declared non-prefix reuse (tier blend), apart: an
	// engine counts blended tokens apart from its prefix hits.
	blend blendExpectation
	// tiers sums, by declared tier (gpu, cpu, disk), the requests and
	// expected tokens of those that named one.
	tiers map[string]tierExpectation
}

// observe sets a finished request's declared reuse beside the cached
// tokens it reported. Only successful requests count: a failed one
// reports no usage.
func (c *cacheRun) observe(rec *record.Record, out *runloop.Outgoing) {
	if c == nil || !out.HasExpectedCached || !rec.Success {
		return
	}
	e := &c.expect[1]
	if rec.Phase == record.Warmup {
		e = &c.expect[0]
	}
	bs := int64(c.blockSize)
	want := int64(out.ExpectedCachedTokens)
	if rec.InputTokens > 0 {
		// The block holding the prompt's last token is always computed.
		want = min(want, rec.InputTokens-1)
	}
	aligned := want / bs * bs
	if out.TargetTier == protocol.TierBlend && want > 0 {
		e.blend.observe(aligned, rec.CachedTokens, bs)
		return
	}
	e.addTier(out.TargetTier, aligned)
	e.declared++
	e.expected += aligned
	e.cached += rec.CachedTokens
	switch {
	case want == 0 && rec.CachedTokens > coldSlack:
		e.coldHits++
	case want > 0 && aligned == 0:
		e.belowBlock++
	case aligned > 0 && rec.CachedTokens < aligned-bs:
		e.short++
	}
}

// startCache prepares the run's cache work and does what comes before the
// warmup phase: a reset before-warmup, then the run's first sample.
func startCache(ctx context.Context, p Plan) *cacheRun {
	c := &cacheRun{ctx: ctx, reset: p.Reset, sender: p.Sender, log: p.Log, blockSize: p.BlockSize, blockFrom: p.BlockSizeFrom}
	if c.blockSize <= 0 {
		c.blockSize, c.blockFrom = DefaultBlockSize, BlockFromDefault
	}
	var err error
	if c.metrics, err = startMetrics(ctx, p); err != nil {
		p.Log.Warn().Err(err).Msg("engine metrics are off for this run")
	}
	if c.reset != nil && c.reset.When == ResetBeforeWarmup {
		c.ledger.Reset = resetCache(ctx, c.reset, c.sender, c.metrics, c.log)
	}
	c.metrics.begin()
	return c
}

func (c *cacheRun) phaseStarted(ph protocol.Phase) {
	if c != nil {
		c.metrics.phaseStarted(ph)
	}
}

// phaseEnded samples the phase's end; between the phases it resets the
// cache when asked to before the measured phase.
func (c *cacheRun) phaseEnded(ph protocol.Phase) {
	if c == nil {
		return
	}
	var between func()
	if c.reset != nil && c.reset.When == ResetBeforeMeasure {
		between = func() { c.ledger.Reset = resetCache(c.ctx, c.reset, c.sender, c.metrics, c.log) }
	}
	c.metrics.phaseEnded(ph, between)
}

// finish ends the scraping and computes the summary's engine block and
// cache ledger from the samples and the journal (scan).
func (c *cacheRun) finish(scan scanFunc, workload string) (*report.EngineMetrics, *report.CacheLedger, error) {
	if c == nil {
		return nil, nil, nil
	}
	e, err := c.metrics.finish()
	l := c.ledger
	l.BlockSize, l.BlockSizeFrom = c.blockSize, c.blockFrom
	return e, &l, errors.Join(err, judgeLedger(&l, scan, workload, e, c.blockSize, c.expect))
}
