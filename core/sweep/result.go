package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/lmbench/lmbench/core/analysis"
)

// Files a sweep writes in its output directory, beside one directory per
// point (docs/results-schema.md, "A sweep's files").
const (
	SummaryName = "sweep_summary.json"
	ResultsName = "sweep_results.csv"
	// ParquetName is the combined Parquet file, written when the points
	// use the parquet exporter.
	ParquetName = "sweep_results.parquet"
)

// Result is a sweep: sweep_summary.json as written and read back.
type Result struct {
	Key    string    `json:"key"`  // the swept configuration key
	Flag   string    `json:"flag"` // its flag
	Values []float64 `json:"values"`
	// SLO is --slo as given (nil without one); MinGood the share of good
	// requests a point needs to meet it.
	SLO     *string `json:"slo"`
	MinGood float64 `json:"min_good_share"`
	// Points are those run, in the order they ran (the search's after the
	// ladder's).
	Points []Point `json:"points"`
	// StoppedBy is why the ladder stopped early (nil: it did not).
	StoppedBy *string `json:"stopped_by"`
	// Best is the highest value that met the SLO without saturating, the
	// search's points included (nil without an SLO, or when none met it).
	Best *Point `json:"best"`
	// Complete: the sweep ended without a failed or interrupted point.
	Complete bool `json:"complete"`
	// PredictedFrom is the twin profile the sweep ran on (--engine-url
	// builtin --sim-profile): its figures are predictions. Absent on a
	// measured sweep.
	PredictedFrom *string `json:"predicted_from,omitempty"`
}

// Point is one run of the sweep. A figure is nil when the point's
// summary does not define it (or the point wrote none).
type Point struct {
	Number   int     `json:"point"` // 1, 2, … in the order run
	Value    float64 `json:"value"`
	Search   bool    `json:"search"` // run by the search, not the ladder
	Dir      string  `json:"dir"`    // under the sweep's directory
	Status   string  `json:"status"` // the run's status, or "failed" when it ended in an error
	ExitCode int     `json:"exit_code"`
	Error    *string `json:"error"`
	// From the point's bench_summary.json.
	RequestedRate    *float64 `json:"requested_rate"`
	AchievedSendRate *float64 `json:"achieved_send_rate"`
	AchievedFraction *float64 `json:"achieved_fraction"`
	CompletionRate   *float64 `json:"completion_rate"`
	Successful       *float64 `json:"successful_requests"`
	Failed           *float64 `json:"failed_requests"`
	P50TTFTMs        *float64 `json:"p50_ttft_ms"`
	P99TTFTMs        *float64 `json:"p99_ttft_ms"`
	P50TPOTMs        *float64 `json:"p50_tpot_ms"`
	P99SlipMs        *float64 `json:"p99_schedule_slip_ms"`
	GoodputRPS       *float64 `json:"goodput_rps"`
	GoodShare        *float64 `json:"good_share"`
	// Verdicts: Saturated (sent below SaturatedBelow of the requested
	// rate), MeetsSLO (nil without an SLO).
	Saturated bool  `json:"saturated"`
	MeetsSLO  *bool `json:"meets_slo"`
}

// SaturatedBelow: a point whose achieved send rate is below this share of
// the requested one has saturated the engine or the client.
const SaturatedBelow = 0.90

// Statuses a point ends with: its run's ("completed", "interrupted",
// "aborted") or Failed.
const (
	Completed = "completed"
	Failed    = "failed" // the run ended in an error or wrote no summary
)

// Read reads the sweep in dir back from its sweep_summary.json. An error
// names the file and what was wrong.
func Read(dir string) (*Result, error) {
	path := filepath.Join(dir, SummaryName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no %s: not a sweep's output directory", dir, SummaryName)
	}
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: not a sweep summary: %w", path, err)
	}
	if r.Key == "" {
		return nil, fmt.Errorf("%s: no \"key\" (want the swept configuration key)", path)
	}
	return &r, nil
}

// IsSweep says whether dir is a sweep's output directory.
func IsSweep(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, SummaryName))
	return err == nil && st.Mode().IsRegular()
}

// judge fills p's figures from the bench_summary.json in dir (when the
// run wrote one) and gives its verdicts.
func judge(p *Point, dir string, minGood float64, hasSLO bool) {
	b, err := os.ReadFile(filepath.Join(dir, analysis.SummaryName))
	var s analysis.Summary
	if err == nil {
		s, err = analysis.ParseSummary(b)
	}
	if err != nil {
		p.Status = Failed // none, or not a summary
		return
	}
	if p.Status == "" {
		p.Status = s.Status
	}
	l, g := s.Load, s.Goodput
	p.RequestedRate, p.AchievedSendRate, p.AchievedFraction, p.CompletionRate = l.RequestedRate, l.AchievedSendRate, l.AchievedFraction, l.CompletionRate
	p.P99SlipMs = l.ScheduleSlipMs["p99"]
	successful, failed := float64(s.Results.SuccessfulRequests), float64(s.Results.FailedRequests)
	p.Successful, p.Failed = &successful, &failed
	p.P50TTFTMs, p.P99TTFTMs = s.Results.P50TTFTMs, s.Results.P99TTFTMs
	if m, ok := s.Metrics["tpot_ms"]; ok && !math.IsNaN(m.Median) {
		tpot := m.Median
		p.P50TPOTMs = &tpot
	}
	p.GoodputRPS, p.GoodShare = g.Rate, g.Attainment["all"]
	p.Saturated = p.AchievedFraction != nil && *p.AchievedFraction < SaturatedBelow
	if hasSLO {
		meets := p.GoodShare != nil && *p.GoodShare >= minGood
		p.MeetsSLO = &meets
	}
}

// good says whether p met the SLO without saturating.
func good(p Point) bool {
	return p.Status == Completed && !p.Saturated && p.MeetsSLO != nil && *p.MeetsSLO
}

// ExitCode is the sweep's exit code: when it ended early, that of the
// point that ended it (failed or interrupted, the last; 1 when none ran);
// otherwise 1 when a point had failed requests (its rows say which), 0
// when none had.
func (r *Result) ExitCode() int {
	if !r.Complete {
		if len(r.Points) == 0 {
			return 1
		}
		return r.Points[len(r.Points)-1].ExitCode
	}
	for _, p := range r.Points {
		if p.ExitCode != 0 {
			return 1
		}
	}
	return 0
}
