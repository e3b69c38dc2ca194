package htmlreport

import (
	"math"
	"strings"
	"testing"

	"github.com/lmbench/lmbench/core/analysis"
	"github.com/lmbench/lmbench/core/stats"
)

// The answers section lists every diverging request with its cached
// shares and both answers, under a warning; identical runs say so.
func TestAnswerTables(t *testing.T) {
	t.Parallel()
	ag := &analysis.Agreement{Pairs: 3, Identical: 2, Similarity: 2.0 / 3, Divergence: 0,
		ByShare:   []analysis.AgreementGroup{{Label: stats.ShareMost, Pairs: 3, Identical: 2, Similarity: 2.0 / 3}},
		Diverging: []analysis.DivergingAnswer{{ID: "d1_f0_a0", CachedB: 0.9, Tier: "blend", A: "2222", B: "I do not know."}}}
	ts := answerTables(ag, "B")
	if len(ts) != 2 || len(ts[1].Rows) != 1 || len(ts[1].Warnings) != 1 {
		t.Fatalf("tables %+v", ts)
	}
	if got := strings.Join(ts[1].Rows[0], "|"); got != "d1_f0_a0|0.0%|90.0%|blend|0|0|2222|I do not know." {
		t.Errorf("diverging row %q", got)
	}
	if got := strings.Join(ts[0].Rows[0], "|"); got != "all|3|2 (66.7%)|0.667" {
		t.Errorf("summary row %q", got)
	}
	same := answerTables(&analysis.Agreement{Pairs: 3, Identical: 3, Similarity: 1, Divergence: math.NaN()}, "B")
	if same[1].OK == "" || len(same[1].Warnings) != 0 {
		t.Errorf("identical answers: %+v", same[1])
	}
	if answerTables(nil, "B") != nil {
		t.Error("tables for runs without answers")
	}
}
