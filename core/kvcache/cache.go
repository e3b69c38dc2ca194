package kvcache

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/enginemetrics"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/sdk/host/runloop"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// DefaultBlockSize is vLLM's default KV block, in tokens.
const DefaultBlockSize = config.DefaultBlockSize

// Sender sends the reset's probe requests (the run's engine sender).
type Sender interface {
	Send(ctx context.Context, req engine.Request) engine.Result
}

// Scrape samples the engine's /metrics now at a named point; nil, or a
// nil answer, when metrics are off.
type Scrape func(ctx context.Context, point string) *enginemetrics.Sample

// scanFunc reads a run's journal back, record by record.
type scanFunc = func(fn func(*record.Record) error) (record.Run, error)

// Config is what a run's cache work needs.
type Config struct {
	// Reset resets the engine's prefix cache and checks it; nil: never.
	Reset  *ResetPlan
	Sender Sender
	// Scrape reads the engine's counters around the reset's probes.
	Scrape Scrape
	// BlockSize is the engine's KV block in tokens: the ledger's
	// tolerance per request, and what expected reuse is aligned to (0:
	// DefaultBlockSize); BlockSizeFrom says where it came from.
	BlockSize     int
	BlockSizeFrom string
	// NoCachedTokens names the engine when it reports no cached tokens
	// (Ollama, TGI): the ledger's cached figures are then n/a and reuse is
	// inferred from TTFT; "" when it reports them.
	NoCachedTokens string
	// WorkloadBlock is a block size the workload itself was given
	// (trace-replay's --tr-block-size: the trace's hash block), named by
	// WorkloadBlockFlag; 0 when it has none. The ledger says it is not the
	// engine's when the engine's block is only the default.
	WorkloadBlock     int
	WorkloadBlockFlag string
	Log               zerolog.Logger
}

// Run is what a run does about the engine's KV cache besides measuring
// requests: it resets the prefix cache when --reset-cache asks and checks
// the reset, and at the end sets the journal's cached tokens beside the
// engine's counters (the cache ledger).
type Run struct {
	ctx    context.Context
	reset  *ResetPlan
	sender Sender
	scrape Scrape
	log    zerolog.Logger
	ledger report.CacheLedger
	// blockSize is the engine's KV block in tokens: the ledger's
	// tolerance per request, and what expected reuse is aligned to.
	blockSize int
	blockFrom string // where blockSize came from (Config.BlockSizeFrom)
	// expect is what the workload declared of each phase's requests
	// (the expected-reuse capability), by phase: 0 warmup, 1 measure.
	expect [2]expectation
	// noCached names an engine that reports no cached tokens; inferred
	// gathers the TTFTs of its declared-warm and declared-cold requests.
	noCached string
	inferred *inferredReuse
	// wlBlock and wlBlockFlag are Config.WorkloadBlock and its flag.
	wlBlock     int
	wlBlockFlag string
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

// Start prepares the run's cache work and does what comes before the
// warmup phase: a reset before-warmup.
func Start(ctx context.Context, cfg Config) *Run {
	c := &Run{ctx: ctx, reset: cfg.Reset, sender: cfg.Sender, scrape: cfg.Scrape, log: cfg.Log,
		blockSize: cfg.BlockSize, blockFrom: cfg.BlockSizeFrom, noCached: cfg.NoCachedTokens,
		wlBlock: cfg.WorkloadBlock, wlBlockFlag: cfg.WorkloadBlockFlag}
	if c.noCached != "" {
		c.inferred = newInferredReuse()
	}
	if c.blockSize <= 0 {
		c.blockSize, c.blockFrom = DefaultBlockSize, BlockFromDefault
	}
	if c.reset != nil && c.reset.When == ResetBeforeWarmup {
		c.ledger.Reset = resetCache(ctx, c.reset, c.sender, c.scrape, c.log)
	}
	return c
}

// Observe sets a finished request's declared reuse beside the cached
// tokens it reported. Only successful requests count: a failed one
// reports no usage.
func (c *Run) Observe(rec *record.Record, out *runloop.Outgoing) {
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
	c.inferred.add(rec, aligned, bs)
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

// BetweenPhases is what runs between the warmup and measured phases: the
// reset when --reset-cache asks for one before-measure, else nil.
func (c *Run) BetweenPhases() func() {
	if c == nil || c.reset == nil || c.reset.When != ResetBeforeMeasure {
		return nil
	}
	return func() { c.ledger.Reset = resetCache(c.ctx, c.reset, c.sender, c.scrape, c.log) }
}

// Finish computes the cache ledger from the journal (scan) and the
// engine's figures (e; nil when its /metrics were not read).
func (c *Run) Finish(scan scanFunc, workload string, e *report.EngineMetrics) (*report.CacheLedger, error) {
	if c == nil {
		return nil, nil
	}
	l := c.ledger
	l.BlockSize, l.BlockSizeFrom = c.blockSize, c.blockFrom
	var err error
	if c.noCached != "" {
		l.NotReported = c.noCached
		err = judgeUnreported(&l, scan, workload, e, c.inferred, c.expect)
	} else {
		err = judgeLedger(&l, scan, workload, e, c.blockSize, c.expect)
	}
	if c.blockFrom == BlockFromDefault && c.wlBlock > 0 && c.wlBlock != c.blockSize {
		l.Verdicts = append(l.Verdicts, fmt.Sprintf("the ledger's block (%d tokens) is the engine's KV block, lmbench's default: "+
			"%s %d is the workload's own block, not the engine's; give the engine's with --block-size",
			c.blockSize, c.wlBlockFlag, c.wlBlock))
	}
	return &l, err
}
