package analysis

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/lmbench/lmbench/core/stats"
)

func TestTokenSimilarity(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want float64
	}{
		{"", "", 1},
		{"4832", "4832", 1},
		{"4832", "I do not know.", 0},
		{"the code is 4832", "the code is 4833", 0.75},
		{"a b c d", "a c d", 0.75}, // one deletion
		{"x y", "y x", 0},          // two substitutions
	} {
		if got := TokenSimilarity(strings.Fields(tc.a), strings.Fields(tc.b)); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("TokenSimilarity(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	if got := firstDifference(strings.Fields("the code is 4832"), strings.Fields("the code was 4832")); got != 2 {
		t.Errorf("first difference at %d, want 2", got)
	}
}

// answered gives run r's requests answers, cached shares, tiers and
// exact scores: answers[i] for request i, cached[i] of its 100 prompt
// tokens cached.
func answered(r *Run, answers []string, cached []int64, tier string, exact []float64) *Run {
	for i := range r.Records {
		rec := &r.Records[i]
		rec.OutputText, rec.CachedTokens, rec.TargetTier = answers[i], cached[i], tier
		rec.Scores = map[string]float64{"exact": exact[i]}
	}
	return r
}

// Answers are paired by id: the identical share, the diverging requests
// with their cached share, the split by share and tier, and the scores.
func TestAgreement(t *testing.T) {
	t.Parallel()
	ttft := []float64{10, 10, 10, 10}
	a := answered(craftRun(t, "needle-qa", 1, ttft, 1), []string{"1111", "2222", "3333", "4444"}, []int64{0, 0, 0, 0}, "", []float64{1, 1, 1, 1})
	b := answered(craftRun(t, "needle-qa", 1, ttft, 0.5), []string{"1111", "I do not know.", "3333", "the code 4444"}, []int64{90, 90, 30, 0}, "blend", []float64{1, 0, 1, 0})
	c := Compare(a, b, Options{Resamples: MinResamples})
	ag := c.Answers
	if ag == nil {
		t.Fatalf("no agreement: %s", c.PairNote)
	}
	if ag.Pairs != 4 || ag.Identical != 2 || ag.IdenticalShare() != 0.5 {
		t.Errorf("pairs %d, identical %d (%v); want 4, 2 (0.5)", ag.Pairs, ag.Identical, ag.IdenticalShare())
	}
	want := []DivergingAnswer{
		{ID: "req01", At: 0, Similarity: 0, CachedA: 0, CachedB: 0.9, Tier: "blend", A: "2222", B: "I do not know."},
		{ID: "req03", At: 0, Similarity: 1.0 / 3, CachedA: 0, CachedB: 0, Tier: "blend", A: "4444", B: "the code 4444"},
	}
	if d := cmp.Diff(want, ag.Diverging, cmpopts.EquateApprox(0, 1e-12)); d != "" {
		t.Errorf("diverging (-want +got):\n%s", d)
	}
	wantShare := []AgreementGroup{
		{Label: stats.ShareNone, Pairs: 1, Identical: 0, Similarity: 1.0 / 3},
		{Label: stats.ShareSome, Pairs: 1, Identical: 1, Similarity: 1},
		{Label: stats.ShareMost, Pairs: 2, Identical: 1, Similarity: 0.5},
	}
	if d := cmp.Diff(wantShare, ag.ByShare, cmpopts.EquateApprox(0, 1e-12)); d != "" {
		t.Errorf("by share (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]ScoreMeans{{Key: "exact", A: 1, B: 0.5}}, ag.Scores); d != "" {
		t.Errorf("scores (-want +got):\n%s", d)
	}
	var out bytes.Buffer
	if err := WriteComparisons(&out, []*Run{a, b}, []Comparison{c}, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Answers (4 paired): identical 2 (50.0%)", "! 2 answers differ", "req01", `"I do not know."`, "score exact: A 100.0%, B 50.0%"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("output lacks %q:\n%s", s, out.String())
		}
	}
}

// Without recorded answers a comparison says nothing of them; with one
// run's only, it says how to get both.
func TestAgreementWithoutOutputs(t *testing.T) {
	t.Parallel()
	a := craftRun(t, "w", 1, spread, 1)
	if ag := Agree(a, a); ag != nil {
		t.Errorf("agreement of runs without answers: %+v", ag)
	}
	b := craftRun(t, "w", 1, spread, 1)
	b.Records[0].OutputText = "4832"
	ag := Agree(a, b)
	if ag == nil || ag.Pairs != 0 || ag.Note != "only one run recorded its answers: run both with --record-outputs" || !math.IsNaN(ag.Similarity) {
		t.Errorf("agreement %+v", ag)
	}
}
