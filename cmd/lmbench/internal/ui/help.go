package ui

import (
	"fmt"
	"io"
	"strings"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/pluginset"
)

// RunUsage is lmbench run's usage line.
const RunUsage = "Usage: lmbench run --engine-url URL --workload NAME [flags]"

// SweepUsage is lmbench sweep's help.
const SweepUsage = `lmbench sweep --sweep KEY=VALUES [--sweep-search] [run flags]

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
Each sweep option is also a config key (sweep, sweep_continue,
sweep_min_good, sweep_search, sweep_search_steps) and a variable
(LMBENCH_SWEEP, …); --export-config writes them beside the run's, and
lmbench sweep --config FILE replays the sweep.
`

// RunHelpFooter ends lmbench run's help.
const RunHelpFooter = `
Every option can also be set in a --config file (key: the flag without
dashes, with underscores: --kv-cache-volume → kv_cache_volume) or in the
environment (LMBENCH_KV_CACHE_VOLUME). Flags beat the environment, which
beats the file, which beats the defaults. With required arguments missing
on a terminal, a guided setup asks for them.
`

// RunHelp prints lmbench run's help: the general flags, then each
// plugin's (reg says which flag is whose), then the footer.
func RunHelp(w io.Writer, fs *pflag.FlagSet, reg *config.Registry, simPrefix string, plugins []pluginset.Plugin) {
	fmt.Fprintln(w, RunUsage)
	general := pflag.NewFlagSet("general", pflag.ContinueOnError)
	general.SortFlags = false
	owned := map[string]*pflag.FlagSet{}
	fs.VisitAll(func(f *pflag.Flag) {
		o, ok := reg.LookupFlag(f.Name)
		if !ok || o.Owner == "" {
			general.AddFlag(f)
			return
		}
		if owned[o.Owner] == nil {
			owned[o.Owner] = pflag.NewFlagSet(o.Owner, pflag.ContinueOnError)
			owned[o.Owner].SortFlags = false
		}
		owned[o.Owner].AddFlag(f)
	})
	GeneralFlags(w, general, simPrefix)
	for _, l := range plugins {
		sub := owned[l.Name()]
		if sub == nil {
			continue
		}
		fmt.Fprintf(w, "\n%s %s — %s:\n", capitalize(l.Kind()), l.Name(), l.Summary())
		fmt.Fprint(w, sub.FlagUsagesWrapped(100))
	}
	fmt.Fprint(w, RunHelpFooter)
}

// GeneralFlags prints lmbench's own flags, the built-in engine's
// flags (simPrefix, "sim-") in a section of their own: mixed in, their long names
// pushed every general flag's description to a narrow column.
func GeneralFlags(w io.Writer, fs *pflag.FlagSet, simPrefix string) {
	general := pflag.NewFlagSet("general", pflag.ContinueOnError)
	engine := pflag.NewFlagSet("sim", pflag.ContinueOnError)
	limits := pflag.NewFlagSet("limits", pflag.ContinueOnError)
	general.SortFlags, engine.SortFlags, limits.SortFlags = false, false, false
	limitFlags := map[string]bool{}
	for _, o := range config.LimitOptions() {
		limitFlags[strings.ReplaceAll(o.Key, "_", "-")] = true
	}
	fs.VisitAll(func(f *pflag.Flag) {
		switch {
		case strings.HasPrefix(f.Name, simPrefix):
			engine.AddFlag(f)
		case limitFlags[f.Name]:
			limits.AddFlag(f)
		default:
			general.AddFlag(f)
		}
	})
	fmt.Fprintln(w, "\nGeneral flags:")
	fmt.Fprint(w, general.FlagUsagesWrapped(100))
	if limits.HasFlags() {
		fmt.Fprintln(w, "\nTimeouts and abort policy (0 turns a limit off; the defaults let a prefill take minutes):")
		fmt.Fprint(w, limits.FlagUsagesWrapped(100))
	}
	if engine.HasFlags() {
		fmt.Fprintln(w, "\nBuilt-in engine (with --engine-url builtin; lmbench sim --help explains the cost model):")
		fmt.Fprint(w, engine.FlagUsagesWrapped(100))
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// RunHelpAll prints lmbench run's help when no workload is named: the
// general flags (fs), then every workload's that described itself, or
// that none was found (searched: where). A workload whose options do not
// register is logged and passed over.
func RunHelpAll(w io.Writer, fs *pflag.FlagSet, simPrefix string, workloads []pluginset.Described, found int, searched []string, log zerolog.Logger) {
	fmt.Fprintln(w, RunUsage)
	GeneralFlags(w, fs, simPrefix)
	for _, d := range workloads {
		reg := config.NewRegistry()
		if _, err := reg.AddPlugin(d.Name, d.Prefix, d.Options); err != nil {
			log.Warn().Err(err).Msg("skipping plugin")
			continue
		}
		wfs := pflag.NewFlagSet(d.Name, pflag.ContinueOnError)
		wfs.SortFlags = false
		reg.RegisterFlags(wfs, nil)
		fmt.Fprintf(w, "\nWorkload %s — %s:\n", d.Name, d.Summary)
		fmt.Fprint(w, wfs.FlagUsagesWrapped(100))
	}
	if found == 0 {
		fmt.Fprintf(w, "\nNo workload plugins found (searched %s).\n", strings.Join(searched, ", "))
	}
	fmt.Fprint(w, RunHelpFooter)
}
