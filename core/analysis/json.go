package analysis

import (
	"encoding/json"
	"io"
	"math"
)

// The JSON form of comparisons (lmbench compare --json): the same figures
// as WriteComparisons, an undefined one null.
type comparisonsJSON struct {
	Runs        []runJSON        `json:"runs"`
	Comparisons []comparisonJSON `json:"comparisons"`
}

type runJSON struct {
	Letter   string `json:"letter"`
	Source   string `json:"source"`
	RunID    string `json:"run_id"`
	Workload string `json:"workload"`
	Status   string `json:"status"`
	Measured int64  `json:"measured_requests"`
	Failed   int64  `json:"failed_requests"`
}

type comparisonJSON struct {
	Baseline   string       `json:"baseline"`
	Run        string       `json:"run"`
	Level      float64      `json:"level"`
	Resamples  int          `json:"resamples"`
	Seed       uint64       `json:"seed"`
	ConfigDiff []string     `json:"config_diff"`
	Metrics    []rowJSON    `json:"metrics"`
	Pairing    *pairJSON    `json:"pairing"`
	PairNote   string       `json:"pairing_note,omitempty"`
	Answers    *answersJSON `json:"answers,omitempty"`
}

type answersJSON struct {
	Paired     int             `json:"paired"`
	Identical  int             `json:"identical"`
	Share      *float64        `json:"identical_share"`
	Similarity *float64        `json:"token_similarity"`
	Divergence *float64        `json:"first_divergence_median"`
	ByShare    []groupJSON     `json:"by_cached_share"`
	ByTier     []groupJSON     `json:"by_tier"`
	Scores     []scoreJSON     `json:"scores"`
	Diverging  []divergingJSON `json:"diverging"`
	Note       string          `json:"note,omitempty"`
}

type groupJSON struct {
	Label      string   `json:"label"`
	Paired     int      `json:"paired"`
	Identical  int      `json:"identical"`
	Similarity *float64 `json:"token_similarity"`
}

type scoreJSON struct {
	Key string   `json:"key"`
	A   *float64 `json:"baseline"`
	B   *float64 `json:"run"`
}

type divergingJSON struct {
	ID         string   `json:"request_id"`
	At         int      `json:"first_divergence"`
	Similarity *float64 `json:"token_similarity"`
	CachedA    *float64 `json:"cached_share_baseline"`
	CachedB    *float64 `json:"cached_share_run"`
	Tier       string   `json:"tier"`
	A          string   `json:"answer_baseline"`
	B          string   `json:"answer_run"`
}

func toAnswersJSON(ag *Agreement) *answersJSON {
	if ag == nil {
		return nil
	}
	out := &answersJSON{Paired: ag.Pairs, Identical: ag.Identical, Share: num(ag.IdenticalShare()), Similarity: num(ag.Similarity),
		Divergence: num(ag.Divergence), ByShare: []groupJSON{}, ByTier: []groupJSON{}, Scores: []scoreJSON{}, Diverging: []divergingJSON{}, Note: ag.Note}
	for _, gs := range []struct {
		dst *[]groupJSON
		src []AgreementGroup
	}{{&out.ByShare, ag.ByShare}, {&out.ByTier, ag.ByTier}} {
		for _, g := range gs.src {
			*gs.dst = append(*gs.dst, groupJSON{Label: g.Label, Paired: g.Pairs, Identical: g.Identical, Similarity: num(g.Similarity)})
		}
	}
	for _, s := range ag.Scores {
		out.Scores = append(out.Scores, scoreJSON{Key: s.Key, A: num(s.A), B: num(s.B)})
	}
	for _, d := range ag.Diverging {
		out.Diverging = append(out.Diverging, divergingJSON{ID: d.ID, At: d.At, Similarity: num(d.Similarity),
			CachedA: num(d.CachedA), CachedB: num(d.CachedB), Tier: d.Tier, A: d.A, B: d.B})
	}
	return out
}

type rowJSON struct {
	Key            string   `json:"key"`
	Label          string   `json:"label"`
	Unit           string   `json:"unit"`
	HigherIsBetter bool     `json:"higher_is_better"`
	A              *float64 `json:"a"`
	B              *float64 `json:"b"`
	Delta          *float64 `json:"delta"`
	Ratio          *float64 `json:"ratio"`
	Lo             *float64 `json:"ci_low"`
	Hi             *float64 `json:"ci_high"`
	Beyond         bool     `json:"beyond_noise"`
}

type pairJSON struct {
	Paired      int                 `json:"paired"`
	OnlyA       int                 `json:"only_baseline"`
	OnlyB       int                 `json:"only_run"`
	Median      *float64            `json:"ttft_ratio_median"`
	MedianLo    *float64            `json:"ttft_ratio_median_ci_low"`
	MedianHi    *float64            `json:"ttft_ratio_median_ci_high"`
	P10         *float64            `json:"ttft_ratio_p10"`
	P90         *float64            `json:"ttft_ratio_p90"`
	Faster      int                 `json:"faster"`
	Slower      int                 `json:"slower"`
	FasterShare *float64            `json:"faster_share"`
	Requests    []pairedRequestJSON `json:"requests,omitempty"`
}

type pairedRequestJSON struct {
	ID    string   `json:"request_id"`
	A     *float64 `json:"ttft_ms_baseline"`
	B     *float64 `json:"ttft_ms_run"`
	Ratio *float64 `json:"ratio"`
}

// num is v, or nil (null) when it is not a finite number.
func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// WriteComparisonsJSON writes comparisons as one indented JSON document;
// with opt.Pairs, every paired request too.
func WriteComparisonsJSON(w io.Writer, runs []*Run, comps []Comparison, opt TextOptions) error {
	doc := comparisonsJSON{Runs: []runJSON{}, Comparisons: []comparisonJSON{}}
	for i, r := range runs {
		res := r.Summary.Results
		doc.Runs = append(doc.Runs, runJSON{Letter: Letter(i), Source: r.Source, RunID: r.Header.ID, Workload: r.Header.Workload,
			Status: r.Status(), Measured: res.TotalRequests, Failed: res.FailedRequests})
	}
	for ci, c := range comps {
		cj := comparisonJSON{Baseline: "A", Run: Letter(ci + 1), Level: Level, Resamples: c.Resamples, Seed: c.Seed,
			ConfigDiff: c.ConfigDiff, Metrics: []rowJSON{}, PairNote: c.PairNote, Answers: toAnswersJSON(c.Answers)}
		if cj.ConfigDiff == nil {
			cj.ConfigDiff = []string{}
		}
		for _, row := range c.Rows {
			cj.Metrics = append(cj.Metrics, rowJSON{Key: row.Metric.Key, Label: row.Metric.Label, Unit: row.Metric.Unit,
				HigherIsBetter: row.Metric.HigherIsBetter, A: num(row.A), B: num(row.B), Delta: num(row.Delta),
				Ratio: num(row.Ratio), Lo: num(row.Lo), Hi: num(row.Hi), Beyond: row.Beyond})
		}
		if p := c.Pairing; p != nil {
			pj := &pairJSON{Paired: len(p.Pairs), OnlyA: p.OnlyA, OnlyB: p.OnlyB, Median: num(p.Median), MedianLo: num(p.MedianLo),
				MedianHi: num(p.MedianHi), P10: num(p.P10), P90: num(p.P90), Faster: p.Faster, Slower: p.Slower, FasterShare: num(p.FasterShare())}
			if opt.Pairs {
				for _, pr := range p.Pairs {
					pj.Requests = append(pj.Requests, pairedRequestJSON{ID: pr.ID, A: num(pr.A), B: num(pr.B), Ratio: num(pr.Ratio)})
				}
			}
			cj.Pairing = pj
		}
		doc.Comparisons = append(doc.Comparisons, cj)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
