package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/ui"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/invocation"
	"github.com/lmbench/lmbench/core/plugin"
)

// helpAll prints run's help with every discovered workload's flags.
func (s *session) helpAll(w io.Writer) error {
	var c config.RunFlags
	fs := config.RunFlagSet(invocation.Registry(), &c)
	fmt.Fprintln(w, ui.RunUsage)
	ui.GeneralFlags(w, fs, config.SimFlagPrefix)
	var found []plugin.Candidate
	for _, c := range plugin.Discover("workload", plugin.SearchDirs()) {
		if c.Refused != "" {
			s.Log.Warn().Str("plugin", c.Path).Msg("not run: " + c.Refused)
			continue
		}
		found = append(found, c)
	}
	for _, l := range s.Plugins.DescribeAll(found, time.Minute) {
		reg := config.NewRegistry()
		if _, err := reg.AddPlugin(l.Name, l.Prefix, l.Options); err != nil {
			s.Log.Warn().Err(err).Msg("skipping plugin")
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
	fmt.Fprint(w, ui.RunHelpFooter)
	return nil
}

// printRunHelp prints run's help for the chosen workload and exporters.
func printRunHelp(w io.Writer, r *invocation.Resolved) {
	var sections []ui.PluginFlags
	for _, l := range r.Plugins() {
		sections = append(sections, ui.PluginFlags{Kind: l.Kind(), Name: l.Name(), Summary: l.Summary()})
	}
	ui.RunHelp(w, r.FlagSet, r.Registry, config.SimFlagPrefix, sections)
}
