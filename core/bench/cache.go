package bench

import (
	"context"
	"errors"

	"github.com/lmbench/lmbench/core/kvcache"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/sdk/host/runloop"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// cacheRun is what a run does about the engine besides measuring
// requests, at its phase boundaries: it reads the engine's /metrics (nil
// metrics: off) and does the cache work of core/kvcache (the reset, the
// ledger). A nil *cacheRun does nothing.
type cacheRun struct {
	metrics *metricsRun
	cache   *kvcache.Run
}

// startCache starts the run's scraping and cache work and does what comes
// before the warmup phase: a reset before-warmup, then the run's first
// sample.
func startCache(ctx context.Context, p Plan) *cacheRun {
	c := &cacheRun{}
	var err error
	if c.metrics, err = startMetrics(ctx, p); err != nil {
		p.Log.Warn().Err(err).Msg("engine metrics are off for this run")
	}
	cfg := kvcache.Config{Reset: p.Reset, Sender: p.Sender, BlockSize: p.BlockSize, BlockSizeFrom: p.BlockSizeFrom,
		NoCachedTokens: p.NoCachedTokens, WorkloadBlock: p.WorkloadBlock, WorkloadBlockFlag: p.WorkloadBlockFlag, Log: p.Log}
	if c.metrics != nil {
		cfg.Scrape = c.metrics.scrape
	}
	c.cache = kvcache.Start(ctx, cfg)
	c.metrics.begin()
	return c
}

func (c *cacheRun) observe(rec *record.Record, out *runloop.Outgoing) {
	if c != nil {
		c.cache.Observe(rec, out)
	}
}

func (c *cacheRun) phaseStarted(ph protocol.Phase) {
	if c != nil {
		c.metrics.phaseStarted(ph)
	}
}

// phaseEnded samples the phase's end; between the phases it resets the
// cache when asked to before the measured phase.
func (c *cacheRun) phaseEnded(ph protocol.Phase) {
	if c != nil {
		c.metrics.phaseEnded(ph, c.cache.BetweenPhases())
	}
}

// finish ends the scraping and computes the summary's engine block and
// cache ledger from the samples and the journal (scan).
func (c *cacheRun) finish(scan scanFunc, workload string) (*report.EngineMetrics, *report.CacheLedger, error) {
	if c == nil {
		return nil, nil, nil
	}
	e, err := c.metrics.finish()
	l, lerr := c.cache.Finish(scan, workload, e)
	return e, l, errors.Join(err, lerr)
}
