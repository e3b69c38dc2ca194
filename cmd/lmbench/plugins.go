package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lmbench/lmbench/core/plugin"
)

// cmdPlugins lists the plugins found, asking each binary to describe itself.
const pluginsHelp = `Usage: lmbench plugins [list]

Lists the workload and exporter plugins found: kind, name, version, plugin
protocol and path. Plugins are executables named lmbench-<kind>-<name>,
looked for in the directories of LMBENCH_PLUGIN_PATH (a list, like PATH),
then next to the lmbench binary, in its plugins/ subdirectory and in
$XDG_DATA_HOME/lmbench/plugins. The first one of a kind and name wins;
later ones are listed as shadowed.

Searched now: %s
`

func cmdPlugins(args []string, stdout io.Writer) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintf(stdout, pluginsHelp, strings.Join(plugin.SearchDirs(), ", "))
		return nil
	}
	if len(args) > 0 && args[0] != "list" {
		return usageError{fmt.Errorf("plugins: unknown argument %q", args[0])}
	}
	dirs := plugin.SearchDirs()
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tNAME\tVERSION\tPROTOCOL\tPATH")
	for _, c := range plugin.Discover("", dirs) {
		version, proto := "?", "?"
		if c.Refused != "" {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Kind, c.Name, version, proto, c.Path)
			fmt.Fprintf(tw, "\t  (refused)\t\t\t%s\n", c.Refused)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		out, err := exec.CommandContext(ctx, c.Path, "describe").Output()
		cancel()
		if err == nil {
			if d, err := plugin.ParseDescribe(out); err == nil {
				version = d.Info.Version
				proto = fmt.Sprintf("v1.%d", d.Info.ProtocolMinor)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Kind, c.Name, version, proto, c.Path)
		for _, s := range c.Shadowed {
			fmt.Fprintf(tw, "\t  (shadowed)\t\t\t%s\n", s)
		}
	}
	tw.Flush()
	fmt.Fprintf(stdout, "\nSearched: %s\n", strings.Join(dirs, ", "))
	return nil
}

// distinct returns names without repeats, in first-seen order: an exporter
// named twice (--exporter parquet --exporter parquet) writes its file once
// instead of failing as two plugins claiming one flag prefix.
func distinct(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
