package host

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
			if err := judgeLedger(&l, scanOf(tt.recs...), tt.workload, nil); err != nil {
				t.Fatal(err)
			}
			got := strings.Join(l.Verdicts, "\n")
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("verdicts %q, want %q", got, tt.want)
			}
		})
	}
}
