package main

import (
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/host"

	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/plugin"
	"github.com/lmbench/lmbench/core/sim"
)

// subcommands are completed after "lmbench".
var subcommands = []string{"run", "sweep", "sim", "export", "merge", "barrier", "calibrate", "report", "compare", "plugins", "version", "completion", "help"}

// completionScripts call back into `lmbench __complete WORDS…`, which
// prints the candidates (an empty answer means: complete file names), so
// plugin flags complete for whatever workload the command line names.
var completionScripts = map[string]string{
	"bash": `# bash completion for lmbench: source <(lmbench completion bash)
_lmbench() {
    local IFS=$'\n'
    COMPREPLY=($(lmbench __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _lmbench lmbench
`,
	"zsh": `#compdef lmbench
# zsh completion for lmbench: source <(lmbench completion zsh)
_lmbench() {
    local -a c
    c=("${(@f)$(lmbench __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    if [[ -z ${c[1]} ]]; then _files; else compadd -a c; fi
}
compdef _lmbench lmbench
`,
	"fish": `# fish completion for lmbench: lmbench completion fish | source
function __lmbench_complete
    lmbench __complete (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null
end
complete -c lmbench -a '(__lmbench_complete)'
`,
}

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
	if len(args) != 1 || completionScripts[args[0]] == "" {
		return usageError{fmt.Errorf("completion: expected one of bash, zsh, fish, got %q", strings.Join(args, " "))}
	}
	_, err := io.WriteString(stdout, completionScripts[args[0]])
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

func complete(args []string) []string {
	if len(args) == 0 {
		return subcommands
	}
	cur := args[len(args)-1]
	if len(args) == 1 {
		return withPrefix(subcommands, cur)
	}
	prev := args[len(args)-2]
	switch args[0] {
	case "completion":
		return withPrefix(slices.Sorted(func(yield func(string) bool) {
			for k := range completionScripts {
				if !yield(k) {
					return
				}
			}
		}), cur)
	case "plugins":
		return withPrefix([]string{"list"}, cur)
	case "sim":
		fs := pflag.NewFlagSet("sim", pflag.ContinueOnError)
		cfg := sim.DefaultConfig()
		cfg.RegisterFlags(fs, "")
		for _, f := range []string{"host", "port", "log-level", "help"} {
			fs.String(f, "", "")
		}
		if !strings.HasPrefix(cur, "-") {
			return nil // a value
		}
		return flagNames(fs, cur)
	case "export":
		fs := pflag.NewFlagSet("export", pflag.ContinueOnError)
		var f exportFlags
		f.register(fs)
		switch {
		case strings.HasPrefix(cur, "-"):
			return flagNames(fs, cur)
		case prev == "--exporter":
			return withPrefix(pluginNames("exporter"), cur)
		}
		return nil // a value: file names
	case "merge", "barrier":
		fs := pflag.NewFlagSet(args[0], pflag.ContinueOnError)
		if args[0] == "merge" {
			var f mergeFlags
			f.register(fs)
		} else {
			var f barrierFlags
			f.register(fs)
		}
		switch {
		case strings.HasPrefix(cur, "-"):
			return flagNames(fs, cur)
		case prev == "--exporter":
			return withPrefix(pluginNames("exporter"), cur)
		}
		return nil // a value: directories
	case "calibrate":
		fs := pflag.NewFlagSet("calibrate", pflag.ContinueOnError)
		var f calibrateFlags
		f.register(fs)
		if strings.HasPrefix(cur, "-") {
			return flagNames(fs, cur)
		}
		return nil // a value: file names
	case "report", "compare":
		fs := pflag.NewFlagSet(args[0], pflag.ContinueOnError)
		if args[0] == "report" {
			var f reportFlags
			f.register(fs)
		} else {
			var f compareFlags
			f.register(fs)
		}
		if strings.HasPrefix(cur, "-") {
			return flagNames(fs, cur)
		}
		return nil // run directories: file names
	case "run":
		return completeRun(args[1:], prev, cur)
	}
	return nil
}

// completeRun completes `lmbench run` words: flag names (the named
// workload's included), workload and exporter names, enum values; nothing
// (so the shell offers file names) for paths.
func completeRun(words []string, prev, cur string) []string {
	reg := hostRegistry()
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
	var c cliFlags
	fs := runFlags(reg, &c)
	if strings.HasPrefix(prev, "--") && !strings.HasPrefix(cur, "-") {
		switch name := strings.TrimPrefix(prev, "--"); name {
		case "workload":
			return withPrefix(pluginNames("workload"), cur)
		case "exporter":
			return withPrefix(pluginNames("exporter"), cur)
		default:
			if o, ok := reg.LookupFlag(name); ok && len(o.Enum) > 0 {
				return withPrefix(o.Enum, cur)
			}
			if f := fs.Lookup(name); f != nil && f.NoOptDefVal == "" {
				return nil // a value: file names
			}
		}
	}
	if strings.HasPrefix(cur, "-") {
		return flagNames(fs, cur)
	}
	return nil
}

// describeWorkload launches a workload plugin for its schema, or nil.
func describeWorkload(name string) *host.Workload {
	s := newSession(nil, io.Discard, io.Discard)
	defer s.close()
	s.setLog(zerolog.Nop())
	l, err := s.plugins.Workload(name, false, "--workload")
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

func flagNames(fs *pflag.FlagSet, cur string) []string {
	var out []string
	fs.VisitAll(func(f *pflag.Flag) {
		out = append(out, "--"+f.Name)
	})
	return withPrefix(out, cur)
}

func withPrefix(all []string, prefix string) []string {
	var out []string
	for _, s := range all {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}
