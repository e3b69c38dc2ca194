package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/plugin"
)

const runUsage = "Usage: lmbench run --engine-url URL --workload NAME [flags]"

const runHelpFooter = `
Every option can also be set in a --config file (key: the flag without
dashes, with underscores: --kv-cache-volume → kv_cache_volume) or in the
environment (LMBENCH_KV_CACHE_VOLUME). Flags beat the environment, which
beats the file, which beats the defaults. With required arguments missing
on a terminal, a guided setup asks for them.
`

// helpAll prints run's help with every discovered workload's flags.
func (s *session) helpAll(w io.Writer) error {
	var c cliFlags
	fs := runFlags(hostRegistry(), &c)
	fmt.Fprintln(w, runUsage)
	printGeneralFlags(w, fs)
	var found []plugin.Candidate
	for _, c := range plugin.Discover("workload", plugin.SearchDirs()) {
		if c.Refused != "" {
			s.log.Warn().Str("plugin", c.Path).Msg("not run: " + c.Refused)
			continue
		}
		found = append(found, c)
	}
	for _, l := range s.plugins.DescribeAll(found, time.Minute) {
		reg := config.NewRegistry()
		if _, err := reg.AddPlugin(l.Name, l.Prefix, l.Options); err != nil {
			s.log.Warn().Err(err).Msg("skipping plugin")
			continue
		}
		wfs := pflag.NewFlagSet(l.Name, pflag.ContinueOnError)
		wfs.SortFlags = false
		reg.RegisterFlags(wfs, nil)
		fmt.Fprintf(w, "\nWorkload %s — %s:\n", l.Name, l.Summary)
		fmt.Fprint(w, wfs.FlagUsagesWrapped(100))
	}
	if len(found) == 0 {
		fmt.Fprintf(w, "\nNo workload plugins found (searched %s).\n", strings.Join(plugin.SearchDirs(), ", "))
	}
	fmt.Fprint(w, runHelpFooter)
	return nil
}

// printRunHelp prints run's help for the chosen workload and exporters.
func printRunHelp(w io.Writer, r *resolved) {
	fmt.Fprintln(w, runUsage)
	general := pflag.NewFlagSet("general", pflag.ContinueOnError)
	general.SortFlags = false
	owned := map[string]*pflag.FlagSet{}
	r.fs.VisitAll(func(f *pflag.Flag) {
		o, ok := r.reg.LookupFlag(f.Name)
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
	printGeneralFlags(w, general)
	for _, l := range r.plugins() {
		sub := owned[l.Name()]
		if sub == nil {
			continue
		}
		fmt.Fprintf(w, "\n%s %s — %s:\n", capitalize(l.Kind()), l.Name(), l.Summary())
		fmt.Fprint(w, sub.FlagUsagesWrapped(100))
	}
	fmt.Fprint(w, runHelpFooter)
}

// printGeneralFlags prints lmbench's own flags, the built-in engine's
// --sim-* flags in a section of their own: mixed in, their long names
// pushed every general flag's description to a narrow column.
func printGeneralFlags(w io.Writer, fs *pflag.FlagSet) {
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
		case strings.HasPrefix(f.Name, simFlagPrefix):
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
