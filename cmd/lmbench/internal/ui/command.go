package ui

import (
	"fmt"
	"io"
	"slices"

	"github.com/spf13/pflag"
)

// Command is a subcommand as the terminal shows it: its line in lmbench
// help, its --help, its flags and how its words complete.
type Command struct {
	Name    string
	Aliases []string
	// Usage and Summary are its line in lmbench help (no Usage: not
	// listed; no Summary: the usage alone).
	Usage, Summary string
	// Help is lmbench NAME --help's text; its flags follow it.
	Help string
	// Flags registers its flags (nil: none).
	Flags func(*pflag.FlagSet)
	// Words are the fixed words it takes. Complete, when set, completes
	// its words instead (lmbench run's flags depend on the workload).
	Words    []string
	Complete func(words []string, prev, cur string) []string
	// Hidden is neither listed nor completed (__complete).
	Hidden bool
}

// Is says whether name names c (its name or an alias).
func (c Command) Is(name string) bool { return c.Name == name || slices.Contains(c.Aliases, name) }

// FlagSet is lmbench NAME's flags: register's, in its order unless it
// sorts them, then -h/--help unless register placed it. Errors are
// returned, never printed.
func FlagSet(name string, register func(*pflag.FlagSet)) *pflag.FlagSet {
	fs := pflag.NewFlagSet("lmbench "+name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	register(fs)
	if fs.Lookup("help") == nil {
		fs.BoolP("help", "h", false, "Show help.")
	}
	return fs
}

// Helped says --help was given.
func Helped(fs *pflag.FlagSet) bool {
	h, _ := fs.GetBool("help")
	return h
}

// PrintHelp prints c's --help: its text, then fs's flags.
func (c Command) PrintHelp(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprint(w, c.Help, fs.FlagUsagesWrapped(100))
}

// Usage prints lmbench help: what lmbench is, a line per listed command
// (the summaries in one column), where options come from, and examples.
func Usage(w io.Writer, cmds []Command) {
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.Usage))
	}
	fmt.Fprint(w, "lmbench — benchmark OpenAI-compatible inference engines with KV-cache workloads\n\nUsage:\n")
	for _, c := range cmds {
		switch {
		case c.Usage == "" || c.Hidden:
		case c.Summary == "":
			fmt.Fprintf(w, "  lmbench %s\n", c.Usage)
		default:
			fmt.Fprintf(w, "  lmbench %-*s  %s\n", width, c.Usage, c.Summary)
		}
	}
	fmt.Fprint(w, usageFooter)
}

const usageFooter = `
Options also come from a --config file (JSON, YAML or TOML) and LMBENCH_*
environment variables; flags win over both. See lmbench run --help.

Examples:
  lmbench run --engine-url builtin --workload long-doc-qa --tokens-per-gb-kvcache 8192 --kv-cache-volume 1
  lmbench run --engine-url http://localhost:8000 --workload random-prefill --lmcache-url http://localhost:8080
`
