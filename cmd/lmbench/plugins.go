package main

import (
	"fmt"
	"strings"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/ui"
	"github.com/lmbench/lmbench/core/plugin"
)

// cmdPlugins lists the plugins found, asking each binary to describe itself.
func cmdPlugins(c *cli, args []string) error {
	dirs := plugin.SearchDirs()
	switch {
	case wantsHelp(args):
		fmt.Fprintf(c.stdout, c.cmd.Help, strings.Join(dirs, ", "))
		return nil
	case len(args) > 0 && args[0] != "list":
		return usageError{fmt.Errorf("plugins: unknown argument %q", args[0])}
	}
	ui.PluginTable(c.stdout, plugin.List(dirs))
	fmt.Fprintf(c.stdout, "\nSearched: %s\n", strings.Join(dirs, ", "))
	return nil
}

// wantsHelp says args ask a command without flags for its help.
func wantsHelp(args []string) bool { return len(args) > 0 && (args[0] == "-h" || args[0] == "--help") }
