package report

import (
	"fmt"
	"math"

	"github.com/lmbench/lmbench/core/stats"
)

// Headline is what a newcomer reads at the end of a run, in three lines:
// what ran and how it ended, the headline figures (TTFT with and without
// a cache hit, the cached share of the measured prompts), and where the
// files are (files: the run's directory, as the caller words it). A
// figure that is not defined reads n/a.
func Headline(cfg Config, run Run, f stats.Final, files string) []string {
	what := fmt.Sprintf("%s on %s: %s, %d of %d measured requests succeeded in %s s",
		cfg.Workload, cfg.Model, run.status(), f.SuccessfulRequests, f.TotalRequests, figure(f.ElapsedTime, "%.1f"))
	share := math.NaN()
	if l := run.Ledger; l != nil && l.Measure.Reporting > 0 && f.TotalInputTokens > 0 {
		share = 100 * float64(l.Measure.Journal) / float64(f.TotalInputTokens)
	}
	ttft := fmt.Sprintf("TTFT p50 %s ms (no pair of hit and cold requests of like length to compare)", figure(f.P50TTFTMs, "%.1f"))
	if g := run.Ledger.gain(); g != nil {
		ttft = fmt.Sprintf("TTFT %s ms on a cache hit, %s ms cold (%sx)", figure(g.HitTTFT, "%.1f"), figure(g.ColdTTFT, "%.1f"), figure(g.Ratio, "%.2f"))
		if g.QueuedLonger() {
			ttft += fmt.Sprintf(", not comparable: the hits queued behind %s requests, the cold ones behind %s",
				figure(g.HitAhead, "%.0f"), figure(g.ColdAhead, "%.0f"))
		}
	}
	return []string{
		"Ran " + what + ".",
		ttft + "; cached share of the measured prompts " + figure(share, "%.0f") + "%.",
		"Files: " + files + "; an HTML report of them: lmbench report " + cfg.OutputDir,
	}
}

// gain is the ledger's TTFT comparison (nil: none).
func (l *CacheLedger) gain() *TTFTGain {
	if l == nil {
		return nil
	}
	return l.TTFTGain
}

// figure formats v, n/a when it is not defined.
func figure(v float64, format string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return fmt.Sprintf(format, v)
}
