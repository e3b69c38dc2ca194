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
	Baseline   string    `json:"baseline"`
	Run        string    `json:"run"`
	Level      float64   `json:"level"`
	Resamples  int       `json:"resamples"`
	Seed       uint64    `json:"seed"`
	ConfigDiff []string  `json:"config_diff"`
	Metrics    []rowJSON `json:"metrics"`
	Pairing    *pairJSON `json:"pairing"`
	PairNote   string    `json:"pairing_note,omitempty"`
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
			ConfigDiff: c.ConfigDiff, Metrics: []rowJSON{}, PairNote: c.PairNote}
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
