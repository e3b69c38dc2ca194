package kvcache

import (
	"context"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/sdk/host/runloop"
)

// An engine that reports no cached tokens: the ledger says so once,
// leaves the cached figures unknown, and infers reuse from the TTFT of
// requests declared warm against those declared cold.
func TestLedgerInfersReuseWithoutCachedTokens(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		warmTTFT float64
		want     string
	}{
		{"warm faster", 0.162, "(ratio 0.44, over 1 prompt-length buckets): the cache served them (inferred)"},
		{"no gain", 0.370, "no reuse is evident (inferred)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := Start(context.Background(), Config{BlockSize: 16, NoCachedTokens: "Ollama", Log: zerolog.Nop()})
			var recs []record.Record
			for i := range 4 {
				cold := record.Record{Phase: record.Warmup, Success: true, TTFT: 0.371, InputTokens: int64(1000 + i)}
				warm := record.Record{Phase: record.Measure, Success: true, TTFT: tt.warmTTFT, InputTokens: int64(1010 + i)}
				c.Observe(&cold, &runloop.Outgoing{HasExpectedCached: true, ExpectedCachedTokens: 0})
				c.Observe(&warm, &runloop.Outgoing{HasExpectedCached: true, ExpectedCachedTokens: 990})
				recs = append(recs, cold, warm)
			}
			l, err := c.Finish(scanOf(recs...), "long-doc-qa", nil)
			if err != nil {
				t.Fatal(err)
			}
			if l.NotReported != "Ollama" || l.TTFTGain == nil || !l.TTFTGain.Inferred {
				t.Fatalf("ledger = %+v, want Ollama not reporting and an inferred TTFT gain", l)
			}
			if len(l.Verdicts) != 1 {
				t.Fatalf("verdicts %q, want exactly one", l.Verdicts)
			}
			v := l.Verdicts[0]
			if !strings.HasPrefix(v, "Ollama does not report cached tokens: the cached figures are n/a; reuse inferred from TTFT: "+
				"4 requests long-doc-qa declared warm had a median TTFT of") || !strings.Contains(v, tt.want) {
				t.Errorf("verdict %q, want it to end %q", v, tt.want)
			}
			if l.Measure.Short != 0 || l.Measure.Declared != 4 {
				t.Errorf("measured phase %+v: want 4 declared, none short (shortness cannot be measured)", l.Measure)
			}
		})
	}
}

// Too few declared requests: the ledger says it cannot infer, still once.
func TestLedgerWithoutCachedTokensTooFew(t *testing.T) {
	t.Parallel()
	c := Start(context.Background(), Config{BlockSize: 16, NoCachedTokens: "TGI", Log: zerolog.Nop()})
	rec := record.Record{Phase: record.Measure, Success: true, TTFT: 0.1, InputTokens: 500}
	c.Observe(&rec, &runloop.Outgoing{HasExpectedCached: true, ExpectedCachedTokens: 400})
	l, err := c.Finish(scanOf(rec), "mrc", nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.TTFTGain != nil || len(l.Verdicts) != 1 || !strings.Contains(l.Verdicts[0], "TGI does not report cached tokens") ||
		!strings.Contains(l.Verdicts[0], "too few requests mrc declared warm and cold") {
		t.Errorf("ledger gain %+v, verdicts %q", l.TTFTGain, l.Verdicts)
	}
}

// A workload's own block size (trace-replay's hash block) is not the
// engine's: the ledger says so when the engine's is only the default.
func TestLedgerNamesTheWorkloadsBlock(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		from string
		want bool
	}{{BlockFromDefault, true}, {BlockFromFlag, false}} {
		c := Start(context.Background(), Config{BlockSize: 16, BlockSizeFrom: tt.from, WorkloadBlock: 64,
			WorkloadBlockFlag: "--tr-block-size", Log: zerolog.Nop()})
		l, err := c.Finish(scanOf(), "trace-replay", nil)
		if err != nil {
			t.Fatal(err)
		}
		got := verdictContaining(l.Verdicts, "--tr-block-size 64 is the workload's own block, not the engine's") != ""
		if got != tt.want {
			t.Errorf("block from %q: note %v, want %v (verdicts %q)", tt.from, got, tt.want, l.Verdicts)
		}
	}
}

func verdictContaining(vs []string, sub string) string {
	for _, v := range vs {
		if strings.Contains(v, sub) {
			return v
		}
	}
	return ""
}
