package stats

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/lmbench/lmbench/core/record"
)

// Scores are averaged overall, by the first tag key's values (numbers in
// numeric order) and by cached share, each group with its mean TTFT;
// unscored and warmup records count in none.
func TestScores(t *testing.T) {
	t.Parallel()
	rec := func(depth string, cached int64, exact float64, ttftMs float64) record.Record {
		return record.Record{Phase: record.Measure, Success: true, TTFT: ttftMs / 1000, InputTokens: 100, CachedTokens: cached,
			Tags: map[string]string{"depth": depth}, Scores: map[string]float64{"exact": exact}}
	}
	recs := []record.Record{
		rec("0.9", 90, 1, 10), rec("0.1", 0, 1, 50), rec("0.9", 90, 0, 20), rec("0.1", 60, 1, 30),
		{Phase: record.Measure, Success: true, TTFT: 1}, // not scored
		{Phase: record.Warmup, Scores: map[string]float64{"exact": 0}},
	}
	b := NewBuilder(time.Unix(0, 0), 0, Options{})
	for i := range recs {
		b.Add(&recs[i])
	}
	got := b.Scores("depth")
	g := func(label string, n int, exact, ttft float64) ScoreGroup {
		return ScoreGroup{Label: label, Requests: n, Means: map[string]float64{"exact": exact}, MeanTTFTMs: ttft}
	}
	want := &Scores{Keys: []string{"exact"}, All: g("all", 4, 0.75, 27.5), By: "depth",
		ByTag:   []ScoreGroup{g("0.1", 2, 1, 40), g("0.9", 2, 0.5, 15)},
		ByShare: []ScoreGroup{g(ShareNone, 1, 1, 50), g(ShareMost, 3, 2.0/3, 20)}}
	if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); d != "" {
		t.Errorf("scores (-want +got):\n%s", d)
	}
	if NewBuilder(time.Unix(0, 0), 0, Options{}).Scores("depth") != nil {
		t.Error("scores of a run without any")
	}
}
