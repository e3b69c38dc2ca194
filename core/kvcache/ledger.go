package kvcache

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
// first), every random-prefill request. It stands in for a workload
// that declares none of the reuse it expects (the expected-reuse
// capability: random-prefill, an older long-doc-qa).
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
func judgeLedger(l *report.CacheLedger, scan scanFunc, workload string, e *report.EngineMetrics, blockSize int,
	declared [2]expectation) error {
	byDecl := declared[0].declared+declared[1].declared > 0
	var ph [2]journalCache
	gain := newTTFTGain()
	_, err := scan(func(r *record.Record) error {
		gain.add(r, blockSize)
		p := &ph[1]
		if r.Phase == record.Warmup {
			p = &ph[0]
		}
		p.requests++
		p.cached += r.CachedTokens
		if r.CachedTokens > 0 {
			p.reporting++
		}
		if !byDecl && expectsCold(workload, r) && r.Success {
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
	l.Warmup, l.Measure = ledgerPhase(ph[0], declared[0]), ledgerPhase(ph[1], declared[1])
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
	if hit > 0 { // lmbench's list of cold requests, for a workload that declares none
		fix := "reset it first: --reset-cache before-warmup (vLLM: VLLM_SERVER_DEV_MODE=1), or restart the engine"
		if l.Reset != nil && l.Reset.When == ResetBeforeWarmup {
			fix = "the reset before the warmup did not clear them (a KV connector such as LMCache keeps its tiers through a reset)"
		}
		l.Verdicts = append(l.Verdicts, fmt.Sprintf("%d of %d requests %s expects cold (%s) found cached tokens "+
			"(%d in all): hits carried over from an earlier run; %s", hit, cold, workload, coldWhy[workload], cachedCold, fix))
	}
	if e != nil && e.Available() {
		l.Warmup = withEngine(l.Warmup, e.Warmup, blockSize)
		l.Measure = withEngine(l.Measure, e.Measure, blockSize)
	}
	l.Verdicts = append(l.Verdicts, ledgerVerdicts(l, ph, workload)...)
	// With no cached tokens reported at all, the requests that found less
	// than declared say nothing more than the verdict above already did.
	reported := ph[0].cached+ph[1].cached > 0
	l.Verdicts = append(l.Verdicts, declaredVerdicts(declared, workload, blockSize, reported)...)
	l.TTFTGain = gain.result()
	if v := ttftGainVerdict(l.TTFTGain, peakWaiting(e)); v != "" {
		l.Verdicts = append(l.Verdicts, v)
	}
	var warm, measure report.EnginePhase
	if e != nil && e.Available() {
		warm, measure = e.Warmup, e.Measure
	}
	l.Blend = blendCheck(declared, [2]*report.EnginePhase{&warm, &measure}, e != nil && e.Available())
	if v := blendVerdict(l.Blend, workload); v != "" {
		l.Verdicts = append(l.Verdicts, v)
	}
	if e != nil && e.Available() {
		l.Verdicts = append(l.Verdicts, tierVerdicts(declared, [2]report.EnginePhase{warm, measure}, workload)...)
	}
	return nil
}

// peakWaiting is the most requests the engine had waiting in either
// phase; NaN when its metrics do not say.
func peakWaiting(e *report.EngineMetrics) float64 {
	waiting := math.NaN()
	if e == nil || !e.Available() {
		return waiting
	}
	for _, w := range []float64{e.Warmup.WaitingMax, e.Measure.WaitingMax} {
		if !math.IsNaN(w) && (math.IsNaN(waiting) || w > waiting) {
			waiting = w
		}
	}
	return waiting
}

// declaredVerdicts judge the reuse the workload declared against what its
// requests reported.
func declaredVerdicts(declared [2]expectation, workload string, blockSize int, reported bool) []string {
	var out []string
	for i, d := range declared {
		name := []string{"warmup", "measured"}[i]
		if d.coldHits > 0 {
			out = append(out, fmt.Sprintf("%d %s requests %s declared cold found cached tokens: hits where none were "+
				"expected (a cache warm from an earlier run, or a reset that did not clear); reset it first: "+
				"--reset-cache before-warmup", d.coldHits, name, workload))
		}
		if d.belowBlock > 0 {
			out = append(out, fmt.Sprintf("%d %s requests expected less than one block (%d tokens) of reuse: "+
				"the engine caches whole blocks only, so none of it can hit", d.belowBlock, name, blockSize))
		}
		if d.short > 0 && reported {
			out = append(out, fmt.Sprintf("%d of %d %s requests found more than a block less cached than %s expected "+
				"(%d of %d expected tokens in all): the cache did not hold what the workload sized it for "+
				"(lengths in words, not tokens? a smaller cache?)", d.short, d.declared, name, workload, d.cached, d.expected))
		}
	}
	return out
}

// withEngine sets the engine's counters beside a phase's journal side.
// vLLM counts its own prefix cache and a KV connector's apart; a request's
// cached_tokens is both (an engine without a connector has no external
// series: none).
func withEngine(p report.LedgerPhase, e report.EnginePhase, blockSize int) report.LedgerPhase {
	if math.IsNaN(e.PrefixHits) {
		return p
	}
	p.Engine = e.PrefixHits
	if !math.IsNaN(e.ExternalHits) {
		p.Engine += e.ExternalHits
	}
	p.Difference = float64(p.Journal) - p.Engine
	p.Tolerance = float64(blockSize * p.Requests)
	p.Agrees = report.Agreement(p.Difference, p.Tolerance)
	return p
}

// enablePromptTokensDetails is how engines are told to report cached
// tokens, and which never do.
const enablePromptTokensDetails = "vLLM reports them only when started with --enable-prompt-tokens-details, " +
	"SGLang with --enable-cache-report; Ollama and TGI never do (lmbench probe says what this engine reports)"

// ledgerVerdicts are the ledger's own warnings: an engine that reports
// no cached tokens, per-request figures the counters contradict.
func ledgerVerdicts(l *report.CacheLedger, ph [2]journalCache, workload string) []string {
	var out []string
	var journal int64
	for _, p := range ph {
		journal += p.cached
	}
	engine := 0.0
	for _, p := range []report.LedgerPhase{l.Warmup, l.Measure} {
		if !math.IsNaN(p.Engine) {
			engine += p.Engine
		}
	}
	switch {
	case journal == 0 && engine > 0:
		out = append(out, fmt.Sprintf("the engine reports no cached tokens: its counters show %d prefix-cache hit tokens, "+
			"but no request's usage had cached_tokens (%s)", int64(engine), enablePromptTokensDetails))
	case journal == 0 && workload != "random-prefill" && ph[0].requests+ph[1].requests > 0:
		out = append(out, "no request reported cached tokens: nothing hit the cache, or the engine does not report them ("+
			enablePromptTokensDetails+")")
	}
	for _, p := range []struct {
		name string
		p    report.LedgerPhase
	}{{"warmup", l.Warmup}, {"measured", l.Measure}} {
		if p.p.Agrees == "no" && journal > 0 {
			out = append(out, fmt.Sprintf("the %s phase's cached tokens (%d, from the requests) and the engine's hit counters "+
				"(%d) differ by more than one block per request: another client shares the engine, or it counts otherwise",
				p.name, p.p.Journal, int64(p.p.Engine)))
		}
	}
	return out
}

// ledgerPhase is a phase's journal side of the ledger, with what the
// workload declared.
func ledgerPhase(j journalCache, d expectation) report.LedgerPhase {
	n := math.NaN()
	p := report.LedgerPhase{Requests: j.requests, Journal: j.cached, Reporting: j.reporting,
		Engine: n, Difference: n, Tolerance: n, Agrees: "n/a", Expected: n,
		Declared: d.declared, ExpectedMeasured: d.cached, Short: d.short, ColdHits: d.coldHits, BelowBlock: d.belowBlock}
	if d.declared > 0 {
		p.Expected = float64(d.expected)
	}
	return p
}
