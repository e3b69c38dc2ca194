package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Files a sweep writes in its output directory, beside one directory per
// point.
const (
	sweepSummaryName = "sweep_summary.json"
	sweepResultsName = "sweep_results.csv"
)

// Stop-rule thresholds.
const (
	// saturatedBelow: a point whose achieved send rate is below this
	// share of the requested one has saturated the engine or the client.
	saturatedBelow = 0.90
	defaultMinGood = 0.90
	defaultSearch  = 3
)

// sweepFlags are lmbench sweep's own flags; the rest go to each point's run.
type sweepFlags struct {
	spec        string
	search      bool
	searchSteps int
	minGood     float64
	noStop      bool
	help        bool
}

const sweepUsage = `lmbench sweep --sweep KEY=VALUES [--sweep-search] [run flags]

Runs lmbench run once per value of one option, one after another, each in
its own directory under --output-dir (point-01_KEY=VALUE, …, written as it
finishes, so a crash keeps the finished points), and writes beside them
sweep_summary.json (every point's load, latency and goodput figures),
sweep_results.csv (every point's rows, with a point column) and, with
--exporter parquet, sweep_results.parquet (the same rows, with tag_point
and tag_KEY columns).

  --sweep KEY=VALUES        the option (its config key, e.g. mrc_qps, rp_rate,
                            max_concurrency) and its values: 1,2,4,8 or the
                            ranges 1:8:x2 (geometric), 1:8:+1, 1..8 (ascending)
  --sweep-continue          run every point (by default the ladder stops at the
                            first point that saturates: sends below 90% of the
                            requested rate; or, with --slo, that breaks the SLO)
  --sweep-min-good F        with --slo: the share of requests that must be good
                            for a point to meet the SLO (default 0.9)
  --sweep-search            with --slo: after the ladder, bisect between the last
                            point that met the SLO and the first that did not,
                            for the highest value that meets it
  --sweep-search-steps N    bisection steps (default 3)

Every other flag is lmbench run's (lmbench run --help); --json is implied.
`

// splitSweepArgs takes lmbench sweep's flags out of args.
func splitSweepArgs(args []string) (sweepFlags, []string, error) {
	f := sweepFlags{searchSteps: defaultSearch, minGood: defaultMinGood}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		value := func() (string, error) {
			if hasVal {
				return val, nil
			}
			if i+1 >= len(args) {
				return "", usageError{fmt.Errorf("%s needs a value", name)}
			}
			i++
			return args[i], nil
		}
		var err error
		switch name {
		case "--sweep":
			if f.spec != "" {
				return f, nil, usageError{errors.New("--sweep is given twice: a sweep varies one option")}
			}
			f.spec, err = value()
		case "--sweep-search":
			f.search = true
		case "--sweep-continue":
			f.noStop = true
		case "--sweep-search-steps":
			var v string
			if v, err = value(); err == nil {
				if n, perr := strconv.Atoi(v); perr != nil || n < 1 || n > 20 {
					err = usageError{fmt.Errorf("--sweep-search-steps: must be a whole number from 1 to 20, got %q", v)}
				} else {
					f.searchSteps = n
				}
			}
		case "--sweep-min-good":
			var v string
			if v, err = value(); err == nil {
				if x, perr := strconv.ParseFloat(v, 64); perr != nil || !(x > 0 && x <= 1) {
					err = usageError{fmt.Errorf("--sweep-min-good: must be a share in (0, 1], got %q", v)}
				} else {
					f.minGood = x
				}
			}
		case "-h", "--help":
			f.help = true
		default:
			rest = append(rest, a)
		}
		if err != nil {
			return f, nil, err
		}
	}
	return f, rest, nil
}

// sweepPoint is one run of the sweep, as sweep_summary.json lists it.
type sweepPoint struct {
	Point    int     `json:"point"`
	Value    float64 `json:"value"`
	Search   bool    `json:"search"`
	Dir      string  `json:"dir"`
	Status   string  `json:"status"` // the run's status, or "failed" when it ended in an error
	ExitCode int     `json:"exit_code"`
	Error    *string `json:"error"`
	// From the point's bench_summary.json (null when not defined).
	RequestedRate    *float64 `json:"requested_rate"`
	AchievedSendRate *float64 `json:"achieved_send_rate"`
	AchievedFraction *float64 `json:"achieved_fraction"`
	CompletionRate   *float64 `json:"completion_rate"`
	Successful       *float64 `json:"successful_requests"`
	Failed           *float64 `json:"failed_requests"`
	P50TTFTMs        *float64 `json:"p50_ttft_ms"`
	P99TTFTMs        *float64 `json:"p99_ttft_ms"`
	P99SlipMs        *float64 `json:"p99_schedule_slip_ms"`
	GoodputRPS       *float64 `json:"goodput_rps"`
	GoodShare        *float64 `json:"good_share"`
	// Verdicts: saturated (achieved below 90% of requested), meets_slo
	// (null without --slo).
	Saturated bool  `json:"saturated"`
	MeetsSLO  *bool `json:"meets_slo"`
}

type sweepSummary struct {
	Key        string       `json:"key"`
	Flag       string       `json:"flag"`
	Values     []float64    `json:"values"`
	SLO        *string      `json:"slo"`
	MinGood    float64      `json:"min_good_share"`
	Points     []sweepPoint `json:"points"`
	StoppedBy  *string      `json:"stopped_by"`
	Best       *sweepPoint  `json:"best"` // with --sweep-search: the highest value meeting the SLO
	Complete   bool         `json:"complete"`
	resultsErr error
	parquet    *sweepParquet // nil: the points write no Parquet
}

// cmdSweep is `lmbench sweep`.
func cmdSweep(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	sf, runArgs, err := splitSweepArgs(args)
	if err != nil {
		return exitUsage, err
	}
	if sf.help {
		fmt.Fprint(stdout, sweepUsage)
		return exitOK, nil
	}
	if sf.spec == "" {
		return exitUsage, usageError{errors.New("--sweep KEY=VALUES is required (lmbench sweep --help)")}
	}
	key, values, err := parseSweep(sf.spec)
	if err != nil {
		return exitUsage, usageError{err}
	}
	// Resolve the run once, before anything is sent: the key must be an
	// option, given nowhere else on the command line, and the load
	// options valid.
	s := newSession(stdin, stdout, stderr)
	r, err := s.resolve(runArgs, nil)
	if err != nil {
		s.close()
		return exitFailed, err
	}
	flag := strings.ReplaceAll(key, "_", "-")
	opt, ok := r.reg.LookupFlag(flag)
	outDir := config.ReadOutput(r.vals).Dir
	load, loadErr := config.ReadLoad(r.vals)
	slo := load.SLO.String()
	if r.vals.String(keyShard) != "" {
		loadErr = fmt.Errorf("%s: a sweep runs unsharded (shard each point's run with lmbench run --shard instead)", r.vals.Origin(keyShard))
	}
	pq := parquetOf(r)
	s.close()
	switch {
	case !ok || opt.Key != key:
		hint := ""
		if sug := r.reg.Suggest(key); sug != "" {
			hint = fmt.Sprintf(" (did you mean %s?)", sug)
		}
		return exitUsage, usageError{fmt.Errorf("--sweep %s: no option %s for this workload%s", sf.spec, key, hint)}
	case opt.Type != protocol.OptionInt && opt.Type != protocol.OptionFloat:
		return exitUsage, usageError{fmt.Errorf("--sweep %s: %s is not a number option", sf.spec, key)}
	case loadErr != nil:
		return exitFailed, loadErr
	case sf.search && slo == "":
		return exitUsage, usageError{errors.New("--sweep-search needs --slo: the search is for the highest value that meets it")}
	}
	for _, a := range runArgs {
		if n, _, _ := strings.Cut(a, "="); n == "--"+flag {
			return exitUsage, usageError{fmt.Errorf("--%s is swept by --sweep %s: give it only there", flag, sf.spec)}
		}
	}
	integer := opt.Type == protocol.OptionInt
	if integer {
		for _, v := range values {
			if v != math.Trunc(v) {
				return exitUsage, usageError{fmt.Errorf("--sweep %s: %s takes whole numbers, got %s", sf.spec, key, formatValue(v))}
			}
		}
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return exitFailed, fmt.Errorf("--output-dir %s: %w", outDir, err)
	}
	sum := &sweepSummary{Key: key, Flag: "--" + flag, Values: values, MinGood: sf.minGood, parquet: pq}
	if slo != "" {
		sum.SLO = &slo
	}
	run := func(v float64, search bool) (sweepPoint, int) {
		n := len(sum.Points) + 1
		p := sweepPoint{Point: n, Value: v, Search: search, Dir: fmt.Sprintf("point-%02d_%s=%s", n, key, formatValue(v))}
		fmt.Fprintf(stderr, "lmbench sweep: point %d: %s=%s\n", n, key, formatValue(v))
		pointArgs := append(append([]string{}, runArgs...), "--"+flag, formatValue(v),
			"--output-dir", filepath.Join(outDir, p.Dir), "--json", "--no-interactive")
		code, err := cmdRun(pointArgs, stdin, stdout, stderr)
		p.ExitCode = code
		if err != nil {
			msg := err.Error()
			p.Error, p.Status = &msg, "failed"
			fmt.Fprintf(stderr, "lmbench: point %d: %v\n", n, err)
			if code == exitOK {
				p.ExitCode = exitFailed
			}
		}
		readPoint(&p, filepath.Join(outDir, p.Dir), sf.minGood, slo != "")
		sum.Points = append(sum.Points, p)
		writeSweep(stderr, outDir, sum)
		return p, p.ExitCode
	}
	stopped := func(p sweepPoint) string {
		switch {
		case p.Status != "completed":
			return fmt.Sprintf("point %d ended %s", p.Point, p.Status)
		case sf.noStop:
			return ""
		case p.Saturated:
			return fmt.Sprintf("point %d saturated: sends reached %.1f%% of the requested rate (below %.0f%%)", p.Point, *p.AchievedFraction*100, saturatedBelow*100)
		case p.MeetsSLO != nil && !*p.MeetsSLO:
			return fmt.Sprintf("point %d broke the SLO: %s of the requests were good (below %s)", p.Point, share(p.GoodShare), share(&sf.minGood))
		}
		return ""
	}
	code := exitOK
	for _, v := range values {
		p, c := run(v, false)
		if why := stopped(p); why != "" {
			sum.StoppedBy = &why
			fmt.Fprintln(stderr, "lmbench sweep: stopping: "+why)
			if c == exitInterrupted || p.Status == "failed" {
				code = c
				writeSweep(stderr, outDir, sum)
				return code, nil
			}
			break
		}
	}
	if sf.search {
		if c := search(sum, sf, integer, run); c != exitOK {
			code = c
		}
	}
	sum.Complete = code == exitOK
	writeSweep(stderr, outDir, sum)
	for _, p := range sum.Points {
		if code == exitOK && p.ExitCode != exitOK {
			code = exitFailed // a point with failed requests: its rows say which
		}
	}
	return code, sum.resultsErr
}

// good reports whether p met the SLO without saturating.
func good(p sweepPoint) bool {
	return p.Status == "completed" && !p.Saturated && p.MeetsSLO != nil && *p.MeetsSLO
}

// search bisects between the highest value that met the SLO and the lowest
// above it that did not, for sf.searchSteps points, and records the best.
func search(sum *sweepSummary, sf sweepFlags, integer bool, run func(float64, bool) (sweepPoint, int)) int {
	var lo, hi *sweepPoint
	best := func() {
		for i := range sum.Points {
			p := sum.Points[i]
			if good(p) && (lo == nil || p.Value > lo.Value) {
				lo = &sum.Points[i]
			}
		}
		hi = nil
		for i := range sum.Points {
			p := sum.Points[i]
			if !good(p) && p.Status == "completed" && (lo == nil || p.Value > lo.Value) && (hi == nil || p.Value < hi.Value) {
				hi = &sum.Points[i]
			}
		}
	}
	best()
	for range sf.searchSteps {
		if lo == nil || hi == nil {
			break
		}
		mid := (lo.Value + hi.Value) / 2
		if integer {
			mid = math.Floor(mid)
		}
		if mid <= lo.Value || mid >= hi.Value {
			break
		}
		if _, c := run(mid, true); c == exitInterrupted {
			return c
		}
		lo, hi = nil, nil
		best()
	}
	if lo != nil {
		b := *lo
		sum.Best = &b
	}
	return exitOK
}

func share(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*v*100, 'f', 1, 64) + "%"
}

// readPoint fills p's figures from its bench_summary.json (when the run
// wrote one) and judges it.
func readPoint(p *sweepPoint, dir string, minGood float64, hasSLO bool) {
	b, err := os.ReadFile(filepath.Join(dir, "bench_summary.json"))
	if err != nil {
		if p.Status == "" {
			p.Status = "failed"
		}
		return
	}
	var doc struct {
		Results map[string]*float64 `json:"results"`
		Run     struct {
			Status string `json:"status"`
		} `json:"run"`
		Load struct {
			Requested  *float64            `json:"requested_rate"`
			Send       *float64            `json:"achieved_send_rate"`
			Fraction   *float64            `json:"achieved_fraction"`
			Completion *float64            `json:"completion_rate"`
			Slip       map[string]*float64 `json:"schedule_slip_ms"`
		} `json:"load"`
		Goodput struct {
			Rate       *float64            `json:"goodput_rps"`
			Attainment map[string]*float64 `json:"attainment"`
		} `json:"goodput"`
	}
	if json.Unmarshal(b, &doc) != nil {
		p.Status = "failed"
		return
	}
	p.P99SlipMs = doc.Load.Slip["p99"]
	if p.Status == "" {
		p.Status = doc.Run.Status
	}
	p.RequestedRate, p.AchievedSendRate, p.AchievedFraction, p.CompletionRate = doc.Load.Requested, doc.Load.Send, doc.Load.Fraction, doc.Load.Completion
	p.Successful, p.Failed = doc.Results["successful_requests"], doc.Results["failed_requests"]
	p.P50TTFTMs, p.P99TTFTMs = doc.Results["p50_ttft_ms"], doc.Results["p99_ttft_ms"]
	p.GoodputRPS, p.GoodShare = doc.Goodput.Rate, doc.Goodput.Attainment["all"]
	p.Saturated = p.AchievedFraction != nil && *p.AchievedFraction < saturatedBelow
	if hasSLO {
		meets := p.GoodShare != nil && *p.GoodShare >= minGood
		p.MeetsSLO = &meets
	}
}

// writeSweep rewrites sweep_summary.json, sweep_results.csv and (when the
// points write Parquet) sweep_results.parquet from the points so far, each through a temporary file and a rename, so a kill
// leaves the last complete versions.
func writeSweep(stderr io.Writer, dir string, sum *sweepSummary) {
	b, err := json.MarshalIndent(sum, "", "  ")
	if err == nil {
		err = writeAtomic(filepath.Join(dir, sweepSummaryName), func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err })
	}
	if err == nil {
		err = writeAtomic(filepath.Join(dir, sweepResultsName), func(w io.Writer) error { return combineResults(w, dir, sum) })
	}
	if err == nil && sum.parquet != nil {
		err = combineParquet(stderr, dir, sum, sum.parquet, b)
	}
	if err != nil {
		sum.resultsErr = err
		fmt.Fprintf(stderr, "lmbench sweep: %v\n", err)
	}
}

// combineResults writes every point's bench_results.csv rows after a
// point column and the swept option's column.
func combineResults(w io.Writer, dir string, sum *sweepSummary) error {
	cw := csv.NewWriter(w)
	var header []string
	for _, p := range sum.Points {
		f, err := os.Open(filepath.Join(dir, p.Dir, "bench_results.csv"))
		if errors.Is(err, os.ErrNotExist) {
			continue // no CSV (--no-csv, or a point that failed first)
		}
		if err != nil {
			return err
		}
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(p.Dir, "bench_results.csv"), err)
		}
		if len(rows) == 0 {
			continue
		}
		if header == nil {
			header = rows[0]
			if err := cw.Write(append([]string{"point", sum.Key}, header...)); err != nil {
				return err
			}
		} else if strings.Join(rows[0], ",") != strings.Join(header, ",") {
			return fmt.Errorf("%s: its columns differ from the first point's: not combined", filepath.Join(p.Dir, "bench_results.csv"))
		}
		for _, row := range rows[1:] {
			if err := cw.Write(append([]string{strconv.Itoa(p.Point), formatValue(p.Value)}, row...)); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}
