package sweep

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// Config is one sweep.
type Config struct {
	Spec Spec
	// Integer: the option takes whole numbers (the search's midpoints are
	// rounded down).
	Integer bool
	// OutputDir holds a directory per point and the sweep's files.
	OutputDir string
	// SLO is --slo as given ("": none); a point meets it when at least
	// MinGood of its requests were good.
	SLO     string
	MinGood float64
	// Continue runs every value (the ladder stops only at a point that
	// did not complete).
	Continue bool
	// Search bisects, after the ladder, for SearchSteps points between
	// the highest value that met the SLO and the lowest above it that
	// did not.
	Search      bool
	SearchSteps int
	// Log gets a line per point, why the ladder stopped and a file that
	// could not be written (nil: nowhere).
	Log io.Writer
	// PredictedFrom is the twin profile the points ran on ("": a measured
	// sweep): the sweep is then a prediction (docs/twin.md).
	PredictedFrom string
	// Combine, when set, writes further combined files after the summary
	// and the CSV, each time they are written.
	Combine Combiner
}

// Runner runs one point: the sweep's run with the swept option set to
// the point's value, its files in the point's directory.
type Runner func(ctx context.Context, p PointRun) Outcome

// PointRun is what a Runner runs.
type PointRun struct {
	Number int
	Key    string
	Value  float64
	// Dir is the point's output directory.
	Dir string
}

// Outcome is how a point's run ended.
type Outcome struct {
	// Code is the run's exit code (0: it completed without a failed
	// request); not 0 when Err is set.
	Code int
	Err  error
	// Interrupted: the run was interrupted, and so is the sweep.
	Interrupted bool
}

// Combiner writes a combined file of the points in dir so far; summary is
// sweep_summary.json's content.
type Combiner func(dir string, r *Result, summary []byte) error

// Run runs the sweep: the ladder of values, one point after another,
// each point's figures read from the summary its run wrote, the sweep's
// files rewritten after every point (so a killed sweep keeps the finished
// points). The ladder stops at the first point that did not complete and,
// unless Continue, at the first that saturated or broke the SLO; then the
// search, when asked for.
//
// The Result says how it went: Complete is false when a point failed or
// was interrupted, which then is the last point. The error is the last
// file that could not be written (nil when the sweep ended early: its
// point's failure says why).
func Run(ctx context.Context, cfg Config, run Runner) (*Result, error) {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.OutputDir == "" {
		cfg.OutputDir = "." // a sweep's default: its points' directories here
	}
	if err := os.MkdirAll(cfg.OutputDir, 0o755); err != nil {
		return nil, fmt.Errorf("--output-dir %s: %w", cfg.OutputDir, err)
	}
	s := &sweeper{cfg: cfg, run: run, res: &Result{Key: cfg.Spec.Key, Flag: cfg.Spec.Flag(), Values: cfg.Spec.Values, MinGood: cfg.MinGood}}
	if cfg.PredictedFrom != "" {
		s.res.PredictedFrom = &cfg.PredictedFrom
	}
	if cfg.SLO != "" {
		slo := cfg.SLO
		s.res.SLO = &slo
	}
	if !s.ladder(ctx) {
		s.finish()
		return s.res, nil
	}
	s.res.Complete = !cfg.Search || s.search(ctx)
	s.finish()
	return s.res, s.filesErr
}

// finish records the best point (with an SLO: the highest value that met
// it, searched or not), writes the files and prints the points' table.
func (s *sweeper) finish() {
	if s.cfg.SLO != "" && s.res.Best == nil {
		if lo, _ := bracket(s.res.Points); lo != nil {
			b := *lo
			s.res.Best = &b
		}
	}
	s.write()
	WriteTable(s.cfg.Log, s.res)
}

// sweeper is a sweep under way.
type sweeper struct {
	cfg      Config
	run      Runner
	res      *Result
	filesErr error // the last file that could not be written
}

// point runs the next point at v.
func (s *sweeper) point(ctx context.Context, v float64, search bool) (Point, Outcome) {
	key := s.cfg.Spec.Key
	n := len(s.res.Points) + 1
	p := Point{Number: n, Value: v, Search: search, Dir: fmt.Sprintf("point-%02d_%s=%s", n, key, FormatValue(v))}
	fmt.Fprintf(s.cfg.Log, "lmbench sweep: point %d: %s=%s\n", n, key, FormatValue(v))
	dir := filepath.Join(s.cfg.OutputDir, p.Dir)
	out := s.run(ctx, PointRun{Number: n, Key: key, Value: v, Dir: dir})
	p.ExitCode = out.Code
	if out.Err != nil {
		msg := out.Err.Error()
		p.Error, p.Status = &msg, Failed
		fmt.Fprintf(s.cfg.Log, "lmbench: point %d: %v\n", n, out.Err)
	}
	judge(&p, dir, s.cfg.MinGood, s.cfg.SLO != "")
	s.res.Points = append(s.res.Points, p)
	s.write()
	return p, out
}

// ladder runs the values until a stop rule holds; false: the sweep ends
// there (a point failed or was interrupted).
func (s *sweeper) ladder(ctx context.Context) bool {
	for _, v := range s.cfg.Spec.Values {
		p, out := s.point(ctx, v, false)
		if why := s.stopRule(p); why != "" {
			s.res.StoppedBy = &why
			fmt.Fprintln(s.cfg.Log, "lmbench sweep: stopping: "+why)
			return !out.Interrupted && p.Status != Failed
		}
	}
	return true
}

// stopRule is why the ladder stops at p ("": it goes on).
func (s *sweeper) stopRule(p Point) string {
	switch {
	case p.Status != Completed:
		return fmt.Sprintf("point %d ended %s", p.Number, p.Status)
	case s.cfg.Continue:
		return ""
	case p.Saturated:
		return fmt.Sprintf("point %d saturated: sends reached %.1f%% of the requested rate (below %.0f%%)", p.Number, *p.AchievedFraction*100, SaturatedBelow*100)
	case p.MeetsSLO != nil && !*p.MeetsSLO:
		return fmt.Sprintf("point %d broke the SLO: %s of the requests were good (below %s)", p.Number, share(p.GoodShare), share(&s.cfg.MinGood))
	}
	return ""
}

// search bisects between the highest value that met the SLO and the
// lowest above it that did not, for SearchSteps points, and records the
// best; false: a point was interrupted.
func (s *sweeper) search(ctx context.Context) bool {
	lo, hi := bracket(s.res.Points)
	for range s.cfg.SearchSteps {
		if lo == nil || hi == nil {
			break
		}
		mid := (lo.Value + hi.Value) / 2
		if s.cfg.Integer {
			mid = math.Floor(mid)
		}
		if mid <= lo.Value || mid >= hi.Value {
			break
		}
		if _, out := s.point(ctx, mid, true); out.Interrupted {
			return false
		}
		lo, hi = bracket(s.res.Points)
	}
	if lo != nil {
		b := *lo
		s.res.Best = &b
	}
	return true
}

// bracket is the highest point that met the SLO (lo) and the lowest
// completed one above it that did not (hi); nil when there is none.
func bracket(points []Point) (lo, hi *Point) {
	for i := range points {
		if good(points[i]) && (lo == nil || points[i].Value > lo.Value) {
			lo = &points[i]
		}
	}
	for i := range points {
		p := &points[i]
		if !good(*p) && p.Status == Completed && (lo == nil || p.Value > lo.Value) && (hi == nil || p.Value < hi.Value) {
			hi = p
		}
	}
	return lo, hi
}

// share is a share as a percentage ("92.5%"), n/a when not defined.
func share(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*v*100, 'f', 1, 64) + "%"
}
