package report

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/stats"
)

// The headline is three lines: what ran, TTFT with and without a hit and
// the cached share, and where the files are; a figure not defined is n/a.
func TestHeadline(t *testing.T) {
	t.Parallel()
	cfg := Config{Workload: "long-doc-qa", Model: "m", OutputDir: "out"}
	f := stats.Final{Aggregated: stats.Aggregated{TotalRequests: 8, SuccessfulRequests: 8, ElapsedTime: 3.84, TotalInputTokens: 1000}}
	f.P50TTFTMs = 1.8
	run := Run{Ledger: &CacheLedger{Measure: LedgerPhase{Reporting: 8, Journal: 750},
		TTFTGain: &TTFTGain{HitTTFT: 12.5, ColdTTFT: 250, Ratio: 0.05}}}
	want := []string{
		"Ran long-doc-qa on m: completed, 8 of 8 measured requests succeeded in 3.8 s.",
		"TTFT 12.5 ms on a cache hit, 250.0 ms cold (0.05x); cached share of the measured prompts 75%.",
		"Files: out; an HTML report of them: lmbench report out",
	}
	if d := cmp.Diff(want, Headline(cfg, run, f, "out")); d != "" {
		t.Errorf("headline (-want +got):\n%s", d)
	}
	f.P50TTFTMs = math.NaN()
	got := Headline(cfg, Run{}, f, "out")
	if len(got) != 3 || !strings.Contains(got[1], "TTFT p50 n/a ms") || !strings.Contains(got[1], "measured prompts n/a%") {
		t.Errorf("without a ledger or TTFT: %q, want n/a figures", got)
	}
}
