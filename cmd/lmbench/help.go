package main

import (
	"io"
	"time"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/ui"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/invocation"
	"github.com/lmbench/lmbench/core/plugin"
)

// helpAll prints run's help with every discovered workload's flags.
func (s *session) helpAll(w io.Writer) error {
	var c config.RunFlags
	described, found := s.Plugins.DescribeWorkloads(time.Minute)
	ui.RunHelpAll(w, config.RunFlagSet(invocation.Registry(), &c), config.SimFlagPrefix, described, found, plugin.SearchDirs(), s.Log)
	return nil
}

// printRunHelp prints run's help for the chosen workload and exporters.
func printRunHelp(w io.Writer, r *invocation.Resolved) {
	ui.RunHelp(w, r.FlagSet, r.Registry, config.SimFlagPrefix, r.Plugins())
}
