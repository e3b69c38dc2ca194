package invocation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/merge"
	"github.com/lmbench/lmbench/core/plugin"
	"github.com/lmbench/lmbench/core/pluginset"
	"github.com/lmbench/lmbench/core/sweep"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Sweep is a sweep ready to run: its configuration and the run each
// point varies.
type Sweep struct {
	Config sweep.Config
	// Help: lmbench sweep --help (nothing else was checked).
	Help bool
	run  *Resolved
	s    *Session
}

// Sweep resolves the run a sweep varies, its own options among the
// run's (sweep.Options), and checks the sweep before anything is
// sent: the key must be a number option, not given as a flag too, the
// load options valid and nothing required missing. log gets a line per
// point and why the ladder stopped.
func (s *Session) Sweep(args []string, log io.Writer) (*Sweep, error) {
	r, err := s.Resolve(args, nil)
	if err != nil {
		return nil, err
	}
	w := &Sweep{run: r, s: s, Help: r.Flags.Help}
	if w.Help {
		return w, nil
	}
	opts, err := sweep.ReadSettings(r.Values)
	if err != nil {
		return nil, config.UsageError{Err: err}
	}
	r.sweep = &opts
	if opts.Spec == "" {
		return nil, config.UsageError{Err: errors.New("--sweep KEY=VALUES is required (lmbench sweep --help)")}
	}
	spec, err := sweep.ParseSpec(opts.Spec)
	if err != nil {
		return nil, config.UsageError{Err: err}
	}
	if labels, _ := r.Missing(); len(labels) > 0 {
		return nil, fmt.Errorf("Missing required arguments: %s.", strings.Join(labels, ", "))
	}
	if path := r.Flags.ExportConfig; path != "" {
		if err := config.CheckExportPath(path); err != nil {
			return nil, err
		}
	}
	load, loadErr := config.ReadLoad(r.Values)
	w.Config = sweep.Config{Spec: spec, OutputDir: config.ReadOutput(r.Values).Dir, SLO: load.SLO.String(), MinGood: opts.MinGood,
		Continue: opts.Continue, Search: opts.Search, SearchSteps: opts.SearchSteps, Log: log, PredictedFrom: config.SimProfile(r.Values)}
	if sh := config.ReadShard(r.Values); sh.Sharded() {
		loadErr = fmt.Errorf("%s: a sweep runs unsharded (shard each point's run with lmbench run --shard instead)", sh.Origin)
	}
	if err := checkSweep(opts, spec, r, &w.Config); err != nil {
		return nil, config.UsageError{Err: err}
	}
	if loadErr != nil {
		return nil, loadErr
	}
	if opts.Search && w.Config.SLO == "" {
		return nil, config.UsageError{Err: errors.New("--sweep-search needs --slo: the search is for the highest value that meets it")}
	}
	return w, nil
}

// checkSweep checks the swept option against the run's registry and
// flags.
func checkSweep(opts sweep.Settings, spec sweep.Spec, r *Resolved, cfg *sweep.Config) error {
	flag := strings.TrimPrefix(spec.Flag(), "--")
	opt, ok := r.Registry.LookupFlag(flag)
	switch {
	case !ok || opt.Key != spec.Key:
		hint := ""
		if sug := r.Registry.Suggest(spec.Key); sug != "" {
			hint = fmt.Sprintf(" (did you mean %s?)", sug)
		}
		return fmt.Errorf("--sweep %s: no option %s for this workload%s", opts.Spec, spec.Key, hint)
	case opt.Type != protocol.OptionInt && opt.Type != protocol.OptionFloat:
		return fmt.Errorf("--sweep %s: %s is not a number option", opts.Spec, spec.Key)
	case opt.Group == sweep.Group:
		return fmt.Errorf("--sweep %s: %s is the sweep's own option", opts.Spec, spec.Key)
	case r.FlagSet.Changed(flag):
		return fmt.Errorf("%s is swept by --sweep %s: give it only there", spec.Flag(), opts.Spec)
	}
	if cfg.Integer = opt.Type == protocol.OptionInt; cfg.Integer {
		return spec.CheckWhole()
	}
	return nil
}

// ExportPath is --export-config ("": run the sweep).
func (w *Sweep) ExportPath() string { return w.run.Flags.ExportConfig }

// Start prepares the sweep's run as it is, for --export-config: the file
// then holds the sweep's options beside the run's.
func (w *Sweep) Start(ctx context.Context) (*Run, error) { return w.s.Start(ctx, w.run) }

// Point runs one point's run prepared by start (Start then Execute),
// with the caller's signals and display around it.
type Point func(ctx context.Context, start func(ctx context.Context, d Display) Ending) Ending

// Run runs the sweep: each point the resolved run with the swept option
// at the point's value, writing into the point's directory with its JSON
// summary, in process, with plugins of its own; point wraps each.
func (w *Sweep) Run(ctx context.Context, point Point) (*sweep.Result, error) {
	w.s.Plugins.Close() // those the checks started: each point starts its own
	w.Config.Combine = w.parquet()
	return sweep.Run(ctx, w.Config, func(ctx context.Context, p sweep.PointRun) sweep.Outcome {
		end := point(ctx, func(ctx context.Context, d Display) Ending { return w.point(ctx, p, d) })
		if end.Err != nil && end.Code == ExitOK {
			end.Code = ExitFailed
		}
		return sweep.Outcome{Code: end.Code, Err: end.Err, Interrupted: end.Code == ExitInterrupted}
	})
}

// point runs p: the sweep's run with p's value, in p's directory.
func (w *Sweep) point(ctx context.Context, p sweep.PointRun, d Display) Ending {
	c := w.s.child()
	defer c.Close()
	r, err := c.variant(w.run, map[string]any{p.Key: sweep.FormatValue(p.Value), config.KeyOutputDir: p.Dir, config.KeyJSON: true})
	if err != nil {
		return Failed(err)
	}
	x, err := c.Start(ctx, r)
	if err != nil {
		return Failed(err)
	}
	return x.Execute(ctx, d)
}

// variant is r with overrides on top of its values and its plugins
// started again in this session.
func (s *Session) variant(r *Resolved, overrides map[string]any) (*Resolved, error) {
	v, err := r.Values.With(overrides)
	if err != nil {
		return nil, err
	}
	out := *r
	out.Values, out.Spec = v, nil
	ch := config.ReadChoice(v)
	name, origin := ch.Workload, ch.WorkloadOrigin
	if r.Workload.ByPath {
		name, origin = ch.Plugin, ch.PluginOrigin
	}
	if out.Workload, err = s.Plugins.Workload(name, r.Workload.ByPath, origin); err != nil {
		return nil, err
	}
	if out.Exporters, err = s.exporters(r.Flags, config.ReadOutput(v).CSV); err != nil {
		return nil, err
	}
	return &out, nil
}

// parquet is the combiner of the points' Parquet files, when the run
// exports Parquet: sweep_results.parquet rewritten from the finished
// points' journals through the parquet exporter plugin, each row with
// the point's number and swept value as the tags "point" and the swept
// key (columns tag_point and tag_KEY), and the sweep's summary in the
// footer. The plugin writes a temporary file and renames it, so a kill
// leaves the previous complete file.
func (w *Sweep) parquet() sweep.Combiner {
	var pq *pluginset.ExporterPlugin
	for _, e := range w.run.Exporters {
		if e.Name() == "parquet" {
			pq = e
		}
	}
	if pq == nil {
		return nil
	}
	opts := w.run.Values.PluginValues(pq.Name())
	opts["file"] = sweep.ParquetName // beside the combined CSV, whatever each point's file is called
	return func(dir string, res *sweep.Result, summary []byte) error {
		c := New(w.s.version, nil)
		c.SetLog(zerolog.New(w.Config.Log).Level(zerolog.WarnLevel))
		defer c.Close()
		e, err := c.Plugins.Exporter(pq.Path, "--exporter")
		if err != nil {
			return fmt.Errorf("%s: %w", sweep.ParquetName, err)
		}
		comb := merge.Combine{
			TagKeys:     res.TagKeys(),
			OutputDir:   dir,
			Exporters:   pluginset.Exporters{{Name: e.Name(), Plugin: plugin.NewExporter(e.Client), Options: opts, Flag: func(o string) string { return "--parquet-" + o }}},
			SummaryJSON: json.RawMessage(summary),
			Log:         zerolog.Nop(),
		}
		for _, p := range res.Parts(dir) {
			comb.Parts = append(comb.Parts, merge.CombinePart{Journal: p.Journal, Tags: p.Tags})
		}
		results, _, err := comb.Run(context.Background())
		for _, r := range results {
			if err == nil {
				err = r.Err
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", sweep.ParquetName, err)
		}
		return nil
	}
}
