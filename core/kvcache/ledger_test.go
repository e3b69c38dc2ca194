package kvcache

import (
	"strings"
	"testing"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
)

func scanOf(recs ...record.Record) scanFunc {
	return func(fn func(*record.Record) error) (record.Run, error) {
		for i := range recs {
			if err := fn(&recs[i]); err != nil {
				return record.Run{}, err
			}
		}
		return record.Run{}, nil
	}
}

// TestCarryOver: a request the workload expects cold that reports more
// than coldSlack cached tokens is flagged; a chat template's shared head
// (coldSlack or less) is not; requests expected warm never are.
func TestCarryOver(t *testing.T) {
	t.Parallel()
	rec := func(ph record.Phase, cached int64) record.Record {
		return record.Record{Phase: ph, Success: true, CachedTokens: cached}
	}
	for _, tt := range []struct {
		name, workload string
		recs           []record.Record
		want           string // "" for no carry-over verdict
	}{
		{"template head only", "long-doc-qa", []record.Record{rec(record.Warmup, 16), rec(record.Warmup, coldSlack)}, ""},
		{"warm documents", "long-doc-qa", []record.Record{rec(record.Warmup, 480), rec(record.Warmup, 0), rec(record.Measure, 480)},
			"1 of 2 requests long-doc-qa expects cold (each document's first request, in warmup) found cached tokens (480 in all)"},
		{"measured questions hit", "long-doc-qa", []record.Record{rec(record.Warmup, 0), rec(record.Measure, 4000)}, ""},
		{"random-prefill", "random-prefill", []record.Record{rec(record.Measure, 0), rec(record.Measure, 1000)},
			"1 of 2 requests random-prefill expects cold"},
		{"other workloads", "multi-round-chat", []record.Record{rec(record.Warmup, 5000)}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var l report.CacheLedger
			if err := judgeLedger(&l, scanOf(tt.recs...), tt.workload, nil, 16, [2]expectation{}); err != nil {
				t.Fatal(err)
			}
			got := strings.Join(l.Verdicts, "\n")
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("verdicts %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLedgerAgainstTheCounters: the journal's cached tokens beside the
// engine's hit counters, within one block per request; an engine whose
// counters hit while no request reported cached tokens is told how to
// make vLLM report them; counters that disagree are flagged.
func TestLedgerAgainstTheCounters(t *testing.T) {
	t.Parallel()
	recs := func(cached ...int64) []record.Record {
		var out []record.Record
		for i, c := range cached {
			ph := record.Measure
			if i == 0 {
				ph = record.Warmup
			}
			out = append(out, record.Record{Phase: ph, Success: true, CachedTokens: c})
		}
		return out
	}
	engine := func(warmHits, measureHits, external float64) *report.EngineMetrics {
		e := &report.EngineMetrics{Engine: "vllm", Warmup: report.NaNPhase(), Measure: report.NaNPhase()}
		e.Warmup.PrefixHits, e.Warmup.ExternalHits = warmHits, 0
		e.Measure.PrefixHits, e.Measure.ExternalHits = measureHits, external
		return e
	}
	for _, tt := range []struct {
		name      string
		recs      []record.Record
		e         *report.EngineMetrics
		agrees    string
		verdict   string
		noVerdict bool
	}{
		{"agree", recs(0, 480, 480), engine(0, 900, 48), "yes", "", true}, // 960 vs 948: within 2 blocks
		{"connector counted", recs(0, 480, 480), engine(0, 480, 480), "yes", "", true},
		{"off by more than a block each", recs(0, 480, 480), engine(0, 400, 0), "no", "differ by more than one block per request", false},
		{"engine reports none", recs(0, 0, 0), engine(0, 960, 0), "no", "--enable-prompt-tokens-details", false},
		{"no counters", recs(0, 0, 0), nil, "n/a", "nothing hit the cache, or the engine does not report them", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var l report.CacheLedger
			if err := judgeLedger(&l, scanOf(tt.recs...), "long-doc-qa", tt.e, 16, [2]expectation{}); err != nil {
				t.Fatal(err)
			}
			if l.Measure.Agrees != tt.agrees {
				t.Errorf("measured agrees = %q (journal %d, engine %v, tolerance %v), want %q",
					l.Measure.Agrees, l.Measure.Journal, l.Measure.Engine, l.Measure.Tolerance, tt.agrees)
			}
			got := strings.Join(l.Verdicts, "\n")
			if tt.noVerdict && got != "" || !tt.noVerdict && !strings.Contains(got, tt.verdict) {
				t.Errorf("verdicts %q, want %q", got, tt.verdict)
			}
		})
	}
}
