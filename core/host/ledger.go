package host

import (
	"fmt"
	"math"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
)

// coldSlack is how many cached tokens a request expected cold may still
// report: a chat template's fixed head (a system header, a date line) is
// shared by every prompt and is a block or two of any engine's cache.
const coldSlack = 64

// expectsCold reports whether a workload expects a request to find
// nothing in the cache: long-doc-qa's warmup requests (each document's
// first), every random-prefill request. It stands in for the workloads'
// own declaration of the reuse they expect, a protocol addition still to
// come.
func expectsCold(workload string, r *record.Record) bool {
	switch workload {
	case "long-doc-qa":
		return r.Phase == record.Warmup
	case "random-prefill":
		return true
	}
	return false
}

// coldWhy says which requests expectsCold picks, for the verdict.
var coldWhy = map[string]string{
	"long-doc-qa":    "each document's first request, in warmup",
	"random-prefill": "every prompt is new",
}

// journalCache is a phase's cached tokens as the journal has them.
type journalCache struct {
	requests, reporting int
	cached              int64
	// Requests the workload expects cold, and those of them that found
	// more than coldSlack cached tokens (coldCached of them in all).
	cold, coldHit int
	coldCached    int64
}

// judgeLedger reads the journal back for the cached tokens the engine
// reported per request, fills the ledger's phases and sets its verdicts:
// a reset that failed or did not clear, hits where the workload expected
// none.
func judgeLedger(l *report.CacheLedger, scan scanFunc, workload string, e *report.EngineMetrics) error {
	var ph [2]journalCache
	_, err := scan(func(r *record.Record) error {
		p := &ph[1]
		if r.Phase == record.Warmup {
			p = &ph[0]
		}
		p.requests++
		p.cached += r.CachedTokens
		if r.CachedTokens > 0 {
			p.reporting++
		}
		if expectsCold(workload, r) && r.Success {
			p.cold++
			if r.CachedTokens > coldSlack {
				p.coldHit++
				p.coldCached += r.CachedTokens
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cache ledger: reading the journal back: %w", err)
	}
	l.Warmup, l.Measure = ledgerPhase(ph[0]), ledgerPhase(ph[1])
	if r := l.Reset; r != nil {
		switch {
		case r.Error != "":
			l.Verdicts = append(l.Verdicts, fmt.Sprintf("the cache reset (%s) failed: %s", r.When, r.Error))
		case r.Cleared == "no":
			l.Verdicts = append(l.Verdicts, fmt.Sprintf("the cache reset (%s) answered %d but did not clear the prefix cache: "+
				"the phase after it started warm", r.When, r.Status))
		}
	}
	var cold, hit int
	var cachedCold int64
	for _, p := range ph {
		cold, hit, cachedCold = cold+p.cold, hit+p.coldHit, cachedCold+p.coldCached
	}
	if hit > 0 {
		fix := "reset it first: --reset-cache before-warmup (vLLM: VLLM_SERVER_DEV_MODE=1), or restart the engine"
		if l.Reset != nil && l.Reset.When == ResetBeforeWarmup {
			fix = "the reset before the warmup did not clear them (a KV connector such as LMCache keeps its tiers through a reset)"
		}
		l.Verdicts = append(l.Verdicts, fmt.Sprintf("%d of %d requests %s expects cold (%s) found cached tokens "+
			"(%d in all): hits carried over from an earlier run; %s", hit, cold, workload, coldWhy[workload], cachedCold, fix))
	}
	_ = e
	return nil
}

// ledgerPhase is a phase's journal side of the ledger.
func ledgerPhase(j journalCache) report.LedgerPhase {
	n := math.NaN()
	return report.LedgerPhase{Requests: j.requests, Journal: j.cached, Reporting: j.reporting,
		Engine: n, Difference: n, Tolerance: n, Agrees: "n/a"}
}
