package ui

import (
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

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

// CompletionShells are the shells CompletionScript knows.
func CompletionShells() []string {
	return slices.Sorted(func(yield func(string) bool) {
		for k := range completionScripts {
			if !yield(k) {
				return
			}
		}
	})
}

// CompletionScript is a shell's completion script ("" for a shell it does
// not know).
func CompletionScript(shell string) string { return completionScripts[shell] }

// Completer completes the words after "lmbench": subcommands, their
// flags, plugin names after --exporter and --workload, fixed words.
// Plugins lists the plugins of a kind.
type Completer struct {
	Commands []Command
	Plugins  func(kind string) []string
}

// Complete returns the candidates for the last of args (possibly empty);
// none means: complete file names.
func (c Completer) Complete(args []string) []string {
	var names []string
	for _, cmd := range c.Commands {
		if !cmd.Hidden {
			names = append(names, cmd.Name)
		}
	}
	if len(args) == 0 {
		return names
	}
	cur := args[len(args)-1]
	if len(args) == 1 {
		return WithPrefix(names, cur)
	}
	prev := args[len(args)-2]
	i := slices.IndexFunc(c.Commands, func(cmd Command) bool { return cmd.Name == args[0] && !cmd.Hidden })
	if i < 0 {
		return nil
	}
	cmd := c.Commands[i]
	switch {
	case cmd.Complete != nil:
		return cmd.Complete(args[1:], prev, cur)
	case len(cmd.Words) > 0:
		return WithPrefix(cmd.Words, cur)
	case strings.HasPrefix(cur, "-") && cmd.Flags != nil:
		return FlagNames(FlagSet(cmd.Name, cmd.Flags), cur)
	case prev == "--exporter" || prev == "--workload":
		return WithPrefix(c.Plugins(strings.TrimPrefix(prev, "--")), cur)
	}
	return nil // a value: file names
}

// FlagNames are fs's flags, as --name, that start with cur.
func FlagNames(fs *pflag.FlagSet, cur string) []string {
	var out []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			out = append(out, "--"+f.Name)
		}
	})
	return WithPrefix(out, cur)
}

// WithPrefix are the words of all that start with prefix.
func WithPrefix(all []string, prefix string) []string {
	var out []string
	for _, s := range all {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}
