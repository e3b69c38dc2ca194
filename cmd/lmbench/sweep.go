package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/sweep"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Defaults of --sweep-min-good and --sweep-search-steps.
const (
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

// cmdSweep is `lmbench sweep`: its flags, the run resolved once, then
// core/sweep runs the points, each through cmdRun.
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
	spec, err := sweep.ParseSpec(sf.spec)
	if err != nil {
		return exitUsage, usageError{err}
	}
	cfg, code, err := sweepConfig(sf, spec, runArgs, stdin, stdout, stderr)
	if err != nil {
		return code, err
	}
	run := func(_ context.Context, p sweep.PointRun) sweep.Outcome {
		pointArgs := append(slices.Clone(runArgs), spec.Flag(), sweep.FormatValue(p.Value),
			"--output-dir", p.Dir, "--json", "--no-interactive")
		code, err := cmdRun(pointArgs, stdin, stdout, stderr)
		if err != nil && code == exitOK {
			code = exitFailed
		}
		return sweep.Outcome{Code: code, Err: err, Interrupted: code == exitInterrupted}
	}
	res, err := sweep.Run(context.Background(), cfg, run)
	if res == nil {
		return exitFailed, err
	}
	return sweepExit(res), err
}

// sweepConfig resolves the run once, before anything is sent: the key
// must be a number option, given nowhere else on the command line, and
// the load options valid.
func sweepConfig(sf sweepFlags, spec sweep.Spec, runArgs []string, stdin io.Reader, stdout, stderr io.Writer) (sweep.Config, int, error) {
	s := newSession(stdin, stdout, stderr)
	r, err := s.resolve(runArgs, nil)
	if err != nil {
		s.close()
		return sweep.Config{}, exitFailed, err
	}
	opt, ok := r.reg.LookupFlag(strings.TrimPrefix(spec.Flag(), "--"))
	load, loadErr := config.ReadLoad(r.vals)
	cfg := sweep.Config{Spec: spec, OutputDir: config.ReadOutput(r.vals).Dir, SLO: load.SLO.String(), MinGood: sf.minGood,
		Continue: sf.noStop, Search: sf.search, SearchSteps: sf.searchSteps, Log: stderr}
	if sh := config.ReadShard(r.vals); sh.Sharded() {
		loadErr = fmt.Errorf("%s: a sweep runs unsharded (shard each point's run with lmbench run --shard instead)", sh.Origin)
	}
	if pq := parquetOf(r); pq != nil {
		cfg.Combine = pq.combine(stderr)
	}
	s.close()
	usage := func(format string, a ...any) (sweep.Config, int, error) {
		return sweep.Config{}, exitUsage, usageError{fmt.Errorf(format, a...)}
	}
	switch {
	case !ok || opt.Key != spec.Key:
		hint := ""
		if sug := r.reg.Suggest(spec.Key); sug != "" {
			hint = fmt.Sprintf(" (did you mean %s?)", sug)
		}
		return usage("--sweep %s: no option %s for this workload%s", sf.spec, spec.Key, hint)
	case opt.Type != protocol.OptionInt && opt.Type != protocol.OptionFloat:
		return usage("--sweep %s: %s is not a number option", sf.spec, spec.Key)
	case loadErr != nil:
		return sweep.Config{}, exitFailed, loadErr
	case sf.search && cfg.SLO == "":
		return usage("--sweep-search needs --slo: the search is for the highest value that meets it")
	}
	for _, a := range runArgs {
		if n, _, _ := strings.Cut(a, "="); n == spec.Flag() {
			return usage("%s is swept by --sweep %s: give it only there", spec.Flag(), sf.spec)
		}
	}
	if cfg.Integer = opt.Type == protocol.OptionInt; cfg.Integer {
		if err := spec.CheckWhole(); err != nil {
			return usage("%w", err)
		}
	}
	return cfg, exitOK, nil
}

// sweepExit is the sweep's exit code: when it ended early, that of the
// point that ended it (failed or interrupted, the last); otherwise 1 when
// a point had failed requests (its rows say which).
func sweepExit(res *sweep.Result) int {
	if !res.Complete {
		if len(res.Points) == 0 {
			return exitFailed
		}
		return res.Points[len(res.Points)-1].ExitCode
	}
	for _, p := range res.Points {
		if p.ExitCode != exitOK {
			return exitFailed
		}
	}
	return exitOK
}
