package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/ui"
	"github.com/lmbench/lmbench/core/bench"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/invocation"
	"github.com/lmbench/lmbench/core/plugin"
)

const completionHelp = `Usage: lmbench completion bash|zsh|fish

Prints the shell's completion script. It completes subcommands, flags
(the named workload's included), workload and exporter names and option
values. To use it:

  bash:  source <(lmbench completion bash)
  zsh:   source <(lmbench completion zsh)
  fish:  lmbench completion fish | source
`

// cmdCompletion prints a shell's completion script.
func cmdCompletion(args []string, stdout io.Writer) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		_, err := io.WriteString(stdout, completionHelp)
		return err
	}
	if len(args) != 1 || ui.CompletionScript(args[0]) == "" {
		return usageError{fmt.Errorf("completion: expected one of bash, zsh, fish, got %q", strings.Join(args, " "))}
	}
	_, err := io.WriteString(stdout, ui.CompletionScript(args[0]))
	return err
}

// cmdComplete prints the completions of the last word of args (the words
// after "lmbench", the last one being completed, possibly empty).
func cmdComplete(args []string, stdout io.Writer) error {
	for _, c := range complete(args) {
		fmt.Fprintln(stdout, c)
	}
	return nil
}

// complete completes the words after "lmbench" (ui.Completer) with every
// subcommand's flags.
func complete(args []string) []string {
	return ui.Completer{Run: completeRun, Plugins: pluginNames, Commands: []ui.Command{
		{Name: "run"}, {Name: "sweep"},
		{Name: "sim", Flags: func(fs *pflag.FlagSet) {
			simRegistry().RegisterFlags(fs, nil)
			for _, f := range []string{"host", "port", "log-level", "help"} {
				fs.String(f, "", "")
			}
		}},
		{Name: "export", Flags: new(exportFlags).register},
		{Name: "merge", Flags: new(mergeFlags).register},
		{Name: "barrier", Flags: new(barrierFlags).register},
		{Name: "calibrate", Flags: new(calibrateFlags).register},
		{Name: "report", Flags: new(reportFlags).register},
		{Name: "compare", Flags: new(compareFlags).register},
		{Name: "plugins", Words: []string{"list"}}, {Name: "version"},
		{Name: "completion", Words: ui.CompletionShells()}, {Name: "help"},
	}}.Complete(args)
}

// completeRun completes `lmbench run` words: flag names (the named
// workload's included), workload and exporter names, enum values; nothing
// (so the shell offers file names) for paths.
func completeRun(words []string, prev, cur string) []string {
	reg := invocation.Registry()
	workload := ""
	for i, w := range words[:len(words)-1] {
		if v, ok := strings.CutPrefix(w, "--workload="); ok {
			workload = v
		} else if w == "--workload" && i+1 < len(words)-1 {
			workload = words[i+1]
		}
	}
	if workload != "" {
		if l := describeWorkload(workload); l != nil {
			reg.AddPlugin(l.Name(), l.Prefix(), l.Options())
		}
	}
	var c config.RunFlags
	fs := config.RunFlagSet(reg, &c)
	if strings.HasPrefix(prev, "--") && !strings.HasPrefix(cur, "-") {
		switch name := strings.TrimPrefix(prev, "--"); name {
		case "workload":
			return ui.WithPrefix(pluginNames("workload"), cur)
		case "exporter":
			return ui.WithPrefix(pluginNames("exporter"), cur)
		default:
			if o, ok := reg.LookupFlag(name); ok && len(o.Enum) > 0 {
				return ui.WithPrefix(o.Enum, cur)
			}
			if f := fs.Lookup(name); f != nil && f.NoOptDefVal == "" {
				return nil // a value: file names
			}
		}
	}
	if strings.HasPrefix(cur, "-") {
		return ui.FlagNames(fs, cur)
	}
	return nil
}

// describeWorkload launches a workload plugin for its schema, or nil.
func describeWorkload(name string) *bench.Workload {
	s := newSession(nil, io.Discard, io.Discard)
	defer s.Close()
	s.SetLog(zerolog.Nop())
	l, err := s.Plugins.Workload(name, false, "--workload")
	if err != nil {
		return nil
	}
	return l
}

func pluginNames(kind string) []string {
	var out []string
	for _, c := range plugin.Discover(kind, plugin.SearchDirs()) {
		if c.Refused == "" {
			out = append(out, c.Name)
		}
	}
	return out
}
