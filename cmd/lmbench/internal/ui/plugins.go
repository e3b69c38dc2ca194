package ui

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/lmbench/lmbench/core/plugin"
)

// PluginTable prints lmbench plugins' table: a line per plugin found
// (kind, name, version, protocol, path), with why it was refused or which
// binaries it shadows under it.
func PluginTable(w io.Writer, found []plugin.Listed) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tNAME\tVERSION\tPROTOCOL\tPATH")
	for _, l := range found {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", l.Kind, l.Name, l.Version, l.Protocol, l.Path)
		if l.Refused != "" {
			fmt.Fprintf(tw, "\t  (refused)\t\t\t%s\n", l.Refused)
			continue
		}
		for _, s := range l.Shadowed {
			fmt.Fprintf(tw, "\t  (shadowed)\t\t\t%s\n", s)
		}
	}
	tw.Flush()
}
