package ui

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/config"
)

// RunUsage is lmbench run's usage line.
const RunUsage = "Usage: lmbench run --engine-url URL --workload NAME [flags]"

// RunHelpFooter ends lmbench run's help.
const RunHelpFooter = `
Every option can also be set in a --config file (key: the flag without
dashes, with underscores: --kv-cache-volume → kv_cache_volume) or in the
environment (LMBENCH_KV_CACHE_VOLUME). Flags beat the environment, which
beats the file, which beats the defaults. With required arguments missing
on a terminal, a guided setup asks for them.
`

// PluginFlags names a plugin whose flags RunHelp lists in a section.
type PluginFlags struct{ Kind, Name, Summary string }

// RunHelp prints lmbench run's help: the general flags, then each
// plugin's (reg says which flag is whose), then the footer.
func RunHelp(w io.Writer, fs *pflag.FlagSet, reg *config.Registry, simPrefix string, plugins []PluginFlags) {
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
		sub := owned[l.Name]
		if sub == nil {
			continue
		}
		fmt.Fprintf(w, "\n%s %s — %s:\n", capitalize(l.Kind), l.Name, l.Summary)
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
