package ui

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/lmbench/lmbench/core/plugin"
)

// PluginTable prints lmbench plugins' table: a line per plugin found
// (kind, name, version, protocol, path), what it is for under it (its
// summary), and why it was refused or which binaries it shadows.
func PluginTable(w io.Writer, found []plugin.Listed) {
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tNAME\tVERSION\tPROTOCOL\tPATH")
	summaries := map[int]string{} // the table's line -> the summary under it
	line := 1
	for _, l := range found {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", l.Kind, l.Name, l.Version, l.Protocol, l.Path)
		summaries[line] = l.Summary
		line++
		if l.Refused != "" {
			fmt.Fprintf(tw, "\t  (refused)\t\t\t%s\n", l.Refused)
			line++
			continue
		}
		for _, s := range l.Shadowed {
			fmt.Fprintf(tw, "\t  (shadowed)\t\t\t%s\n", s)
			line++
		}
	}
	tw.Flush()
	// A summary is set under its plugin's name after the table is laid
	// out: in the tabwriter it would widen the name column or split it.
	indent := strings.Index(table.String(), "NAME")
	for i, text := range strings.SplitAfter(table.String(), "\n") {
		io.WriteString(w, text)
		if s := summaries[i]; s != "" {
			fmt.Fprintf(w, "%s  %s\n", strings.Repeat(" ", indent), oneLine(s, 0))
		}
	}
}

// oneLine is s on one line, clipped to at most width runes (0: any).
func oneLine(s string, width int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); width > 0 && len(r) > width {
		return string(r[:width-1]) + "…"
	}
	return s
}
