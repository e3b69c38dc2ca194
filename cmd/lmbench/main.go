// Command lmbench benchmarks OpenAI-compatible inference engines with
// workloads built to exercise KV-cache reuse. Workloads and exporters are
// plugins (separate processes); this binary wires the host together.
package main

import (
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/ui"
	"github.com/lmbench/lmbench/core/barrier"
	"github.com/lmbench/lmbench/core/invocation"
	"github.com/lmbench/lmbench/core/overhead"
	"github.com/lmbench/lmbench/core/plugin"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// command is a subcommand, declared once in commands: main dispatches on
// it; lmbench help, lmbench NAME --help and completion read its ui part.
// Adding a subcommand is an entry there and a file with its run function.
type command struct {
	ui.Command
	run func(c *cli, args []string) (int, error)
	// ownHint: its usage errors say where its help is; no command list
	// after them.
	ownHint bool
}

// commands are lmbench's subcommands, in the order help lists them (set
// in init: some run functions read the table).
var commands []command

func init() {
	commands = []command{
		{ui.Command{Name: "run", Usage: "run --engine-url URL --workload NAME [flags]", Summary: "run a benchmark (lmbench run --help)",
			Complete: ui.RunCompleter{Flags: runFlagsWith, Plugins: plugin.Names}.Complete}, streams(cmdRun), true},
		{ui.Command{Name: "sweep", Usage: "sweep --sweep KEY=VALUES [run flags]", Summary: "one run per value of an option (lmbench sweep --help)"},
			streams(cmdSweep), true},
		{ui.Command{Name: "sim", Usage: "sim [--port N] [flags]", Summary: "serve the built-in simulated engine",
			Help: ui.SimHelp, Flags: new(simFlags).register}, errOnly(cmdSim), true},
		{ui.Command{Name: "export", Usage: "export --journal PATH [--exporter NAME]...", Summary: "rebuild result files from a run's journal",
			Help: ui.ExportHelp, Flags: new(exportFlags).register}, errOnly(cmdExport), false},
		{ui.Command{Name: "merge", Usage: "merge DIR... [-o DIR] [--wait 1h]", Summary: "one run from the shards of a sharded run (run --shard I/N)",
			Help: ui.MergeHelp, Flags: new(mergeFlags).register}, errOnly(cmdMerge), false},
		{ui.Command{Name: "barrier", Usage: "barrier --shards N [--listen :7070]", Summary: "one start and one clock for a sharded run's shards (run --barrier URL)",
			Help: ui.BarrierHelp, Flags: registerBarrier(new(barrier.Config))}, errOnly(cmdBarrier), false},
		{ui.Command{Name: "calibrate", Usage: "calibrate --journal PATH [--repeat N]", Summary: "measure the client's own latency for a run's schedule",
			Help: ui.CalibrateHelp, Flags: new(calibrateFlags).register}, errOnly(cmdCalibrate), false},
		{ui.Command{Name: "report", Usage: "report DIR... [-o report.html]", Summary: "write a self-contained HTML report of runs (charts, tables, comparison)",
			Help: ui.ReportHelp, Flags: new(reportFlags).register}, errOnly(cmdReport), false},
		{ui.Command{Name: "compare", Usage: "compare A B [C...] [--json]", Summary: "compare runs: deltas, ratios with 95% bootstrap intervals, per-request pairing",
			Help: ui.CompareHelp, Flags: new(compareFlags).register}, errOnly(cmdCompare), false},
		{ui.Command{Name: "fit", Usage: "fit RUN... [-o profile.json]", Summary: "fit the built-in engine to finished runs: a twin profile of the engine",
			Help: ui.FitHelp, Flags: new(fitFlags).register}, errOnly(cmdFit), false},
		{ui.Command{Name: "plugins", Usage: "plugins", Summary: "list the workload and exporter plugins found",
			Help: ui.PluginsHelp, Words: []string{"list"}}, errOnly(cmdPlugins), false},
		{ui.Command{Name: "probe", Usage: "probe --engine-url URL [--json]", Summary: "what the engine reports, what lmbench can measure on it",
			Help: ui.ProbeHelp, Flags: new(probeFlags).register}, errOnly(cmdProbe), false},
		{ui.Command{Name: "version", Aliases: []string{"--version"}, Usage: "version"}, errOnly(cmdVersion), false},
		{ui.Command{Name: "completion", Usage: "completion bash|zsh|fish", Summary: "print a shell completion script",
			Help: ui.CompletionHelp, Words: ui.CompletionShells()}, errOnly(cmdCompletion), false},
		{ui.Command{Name: "help", Aliases: []string{"-h", "--help"}}, errOnly(cmdHelp), false},
		{ui.Command{Name: "__complete", Hidden: true}, errOnly(cmdComplete), false}, // called by the completion scripts
	}
}

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// realMain never calls os.Exit: returning lets the deferred plugin
// cleanup run, so no plugin process outlives the host.
func realMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	defer plugin.Cleanup()
	overhead.ServePprof()
	defer overhead.ProfileToFiles()()
	if len(args) == 0 {
		printUsage(stdout)
		return invocation.ExitUsage
	}
	c := &cli{stdin: stdin, stdout: stdout, stderr: stderr}
	i := slices.IndexFunc(commands, func(cmd command) bool { return cmd.Is(args[0]) })
	if i < 0 {
		return c.exit(invocation.ExitOK, usageError{fmt.Errorf("unknown command %q", args[0])})
	}
	c.cmd = &commands[i]
	return c.exit(c.cmd.run(c, args[1:]))
}

// uiCommands are the commands as the terminal shows them.
func uiCommands() []ui.Command {
	var out []ui.Command
	for _, c := range commands {
		out = append(out, c.Command)
	}
	return out
}

// printUsage prints lmbench help.
func printUsage(w io.Writer) { ui.Usage(w, uiCommands()) }

func cmdHelp(c *cli, _ []string) error {
	printUsage(c.stdout)
	return nil
}

func cmdVersion(c *cli, _ []string) error {
	_, err := fmt.Fprintf(c.stdout, "lmbench %s (plugin protocol v1)\n", version)
	return err
}
