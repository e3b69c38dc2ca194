package htmlreport

import (
	"fmt"
	"strconv"

	"github.com/lmbench/lmbench/core/analysis"
)

// answerTables are a comparison's answer agreement (analysis.Agreement):
// the identical share overall, by cached share and by reuse tier, the
// workload's scores, and every diverging request with its cached share
// and both answers. None when the runs cannot be paired.
func answerTables(ag *analysis.Agreement, b string) []table {
	if ag == nil {
		return nil
	}
	sum := table{Title: "Answers " + b + " against A", Head: []string{"requests", "paired", "identical", "token similarity"}}
	if ag.Pairs == 0 {
		sum.Empty = ag.Note
		return []table{sum}
	}
	sum.Note = "Paired by request id. lmbench decodes greedily (temperature 0): the same prompt should get the same answer. Token similarity: 1 − token edit distance / the longer answer."
	row := func(label string, pairs, identical int, share, sim float64) []string {
		return []string{label, strconv.Itoa(pairs), fmt.Sprintf("%d (%s)", identical, analysis.Percent(share)), analysis.Ratio(sim)}
	}
	sum.Rows = append(sum.Rows, row("all", ag.Pairs, ag.Identical, ag.IdenticalShare(), ag.Similarity))
	for _, g := range ag.ByShare {
		sum.Rows = append(sum.Rows, row("cached share: "+g.Label, g.Pairs, g.Identical, g.IdenticalShare(), g.Similarity))
	}
	for _, g := range ag.ByTier {
		sum.Rows = append(sum.Rows, row("reuse tier: "+g.Label, g.Pairs, g.Identical, g.IdenticalShare(), g.Similarity))
	}
	for _, s := range ag.Scores {
		sum.Rows = append(sum.Rows, []string{"score " + s.Key + " (mean)", "", "A " + analysis.Percent(s.A), b + " " + analysis.Percent(s.B)})
	}
	div := table{Title: "Diverging answers", Head: []string{"request id", "cached A", "cached " + b, "tier", "from token", "similarity", "answer A", "answer " + b}}
	if len(ag.Diverging) == 0 {
		div.OK = "Every paired answer is identical."
		div.Empty = "none"
		return []table{sum, div}
	}
	div.Warnings = []string{fmt.Sprintf("%d of %d answers differ although decoding was greedy; median first divergence at token %s.",
		len(ag.Diverging), ag.Pairs, analysis.Num(ag.Divergence))}
	for _, d := range ag.Diverging {
		tier := d.Tier
		if tier == "" {
			tier = "-"
		}
		div.Rows = append(div.Rows, []string{d.ID, analysis.Percent(d.CachedA), analysis.Percent(d.CachedB), tier,
			strconv.Itoa(d.At), analysis.Ratio(d.Similarity), d.A, d.B})
	}
	return []table{sum, div}
}
