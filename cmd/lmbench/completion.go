package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/ui"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/invocation"
	"github.com/lmbench/lmbench/core/plugin"
	"github.com/lmbench/lmbench/core/pluginset"
)

// cmdCompletion prints a shell's completion script.
func cmdCompletion(c *cli, args []string) error {
	if wantsHelp(args) {
		_, err := io.WriteString(c.stdout, c.cmd.Help)
		return err
	}
	if len(args) != 1 || ui.CompletionScript(args[0]) == "" {
		return usageError{fmt.Errorf("completion: expected one of bash, zsh, fish, got %q", strings.Join(args, " "))}
	}
	_, err := io.WriteString(c.stdout, ui.CompletionScript(args[0]))
	return err
}

// cmdComplete prints the completions of the last word of args (the words
// after "lmbench", the last one being completed, possibly empty).
func cmdComplete(c *cli, args []string) error {
	for _, w := range complete(args) {
		fmt.Fprintln(c.stdout, w)
	}
	return nil
}

// complete completes the words after "lmbench" (ui.Completer) from the
// command table.
func complete(args []string) []string {
	return ui.Completer{Commands: uiCommands(), Plugins: plugin.Names}.Complete(args)
}

// runFlagsWith is lmbench run's flags and registry with the options of
// workload ("": none) added, when it describes itself.
func runFlagsWith(workload string) (*pflag.FlagSet, *config.Registry) {
	reg := invocation.Registry()
	if workload != "" {
		p := pluginset.NewPlugins(zerolog.Nop(), version)
		if l, err := p.Workload(workload, false, "--workload"); err == nil {
			reg.AddPlugin(l.Name(), l.Prefix(), l.Options())
		}
		p.Close()
	}
	var c config.RunFlags
	return config.RunFlagSet(reg, &c), reg
}
