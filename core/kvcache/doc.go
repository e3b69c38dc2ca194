// Package kvcache is what a run does about the engine's KV cache besides
// measuring requests: --reset-cache's reset of the prefix cache, checked
// with a probe prompt sent before and after it; and the cache ledger, the
// cached tokens the requests reported set beside the engine's hit
// counters and beside the reuse the workload declared (the expected-reuse
// capability: per phase, per target tier, blended reuse apart), with the
// TTFT of hits against cold requests and the verdicts that say what went
// wrong.
//
// The orchestration starts it once, feeds it every finished request and
// asks for the ledger at the end:
//
//	c := kvcache.Start(ctx, kvcache.Config{Reset: plan, Sender: s, Scrape: scrape, BlockSize: 16})
//	c.Observe(rec, out)              // each finished request
//	between := c.BetweenPhases()     // the before-measure reset, or nil
//	ledger, err := c.Finish(scan, "long-doc-qa", engineMetrics)
package kvcache
