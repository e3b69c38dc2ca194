package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/lmbench/lmbench/core/stats"
)

// scoresSection is the terminal's block of the workload's scores: each
// score's mean overall, by the workload's first tag and by cached share,
// with the group's mean TTFT; "" when no answer was scored.
func scoresSection(s *stats.Scores) string {
	if s == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(center(" Answers (the workload's scores) ", Width, '-') + "\n")
	line := func(label string, g stats.ScoreGroup) {
		parts := make([]string, 0, len(s.Keys)+1)
		for _, k := range s.Keys {
			parts = append(parts, fmt.Sprintf("%s %s", k, percent(g.Means[k])))
		}
		parts = append(parts, "TTFT "+msText(g.MeanTTFTMs))
		b.WriteString(entry{fmt.Sprintf("%s (%d)", label, g.Requests), strings.Join(parts, ", ")}.String() + "\n")
	}
	line("All", s.All)
	for _, g := range s.ByTag {
		line(s.By+" "+g.Label, g)
	}
	for _, g := range s.ByShare {
		line(g.Label, g)
	}
	return b.String()
}

func percent(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", v*100)
}

func msText(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.1f ms", v)
}

// withScores adds the scores block after lmbench's other additions, only
// for a run whose workload scored answers.
func withScores(doc []kv, s *stats.Scores) []kv {
	if s == nil {
		return doc
	}
	group := func(g stats.ScoreGroup) []kv {
		means := make([]kv, 0, len(s.Keys))
		for _, k := range s.Keys {
			means = append(means, kv{k, g.Means[k]})
		}
		return []kv{{"label", g.Label}, {"requests", int64(g.Requests)}, {"means", means}, {"mean_ttft_ms", g.MeanTTFTMs}}
	}
	groups := func(gs []stats.ScoreGroup) [][]kv {
		out := make([][]kv, 0, len(gs))
		for _, g := range gs {
			out = append(out, group(g))
		}
		return out
	}
	return append(doc, kv{"scores", []kv{
		{"keys", s.Keys},
		{"all", group(s.All)},
		{"by_tag", s.By},
		{"by_tag_value", groups(s.ByTag)},
		{"by_cached_share", groups(s.ByShare)},
	}})
}
