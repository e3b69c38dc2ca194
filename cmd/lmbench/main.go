// Command lmbench benchmarks OpenAI-compatible inference engines with
// workloads built to exercise KV-cache reuse. Workloads and exporters are
// plugins (separate processes); this binary wires the host together.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/lmbench/lmbench/core/invocation"
	"github.com/lmbench/lmbench/core/plugin"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// Exit codes (invocation's).
const (
	exitOK          = invocation.ExitOK
	exitFailed      = invocation.ExitFailed
	exitUsage       = invocation.ExitUsage
	exitQuit        = invocation.ExitQuit
	exitInterrupted = invocation.ExitInterrupted
)

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// usageError is a command-line mistake (exit 2).
type usageError struct{ error }

// realMain never calls os.Exit: returning lets the deferred plugin
// cleanup run, so no plugin process outlives the host.
func realMain(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer plugin.Cleanup()
	servePprof()
	if len(args) == 0 {
		printUsage(stdout)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "run":
		code, err = cmdRun(args[1:], stdin, stdout, stderr)
	case "sweep":
		code, err = cmdSweep(args[1:], stdin, stdout, stderr)
	case "sim":
		err = cmdSim(args[1:], stdout, stderr)
	case "export":
		err = cmdExport(args[1:], stdout, stderr)
	case "merge":
		err = cmdMerge(args[1:], stdout, stderr)
	case "barrier":
		err = cmdBarrier(args[1:], stdout)
	case "calibrate":
		err = cmdCalibrate(args[1:], stdout, stderr)
	case "report":
		err = cmdReport(args[1:], stdout)
	case "compare":
		err = cmdCompare(args[1:], stdout)
	case "plugins":
		err = cmdPlugins(args[1:], stdout)
	case "probe":
		err = cmdProbe(args[1:], stdout)
	case "completion":
		err = cmdCompletion(args[1:], stdout)
	case "__complete": // called by the completion scripts
		err = cmdComplete(args[1:], stdout)
	case "version", "--version":
		fmt.Fprintf(stdout, "lmbench %s (plugin protocol v1)\n", version)
	case "help", "-h", "--help":
		printUsage(stdout)
	default:
		err = usageError{fmt.Errorf("unknown command %q", args[0])}
	}
	if err != nil {
		fmt.Fprintf(stderr, "lmbench: %v\n", err)
		var ue usageError
		if errors.As(err, &ue) {
			if args[0] != "run" && args[0] != "sim" && args[0] != "sweep" {
				printUsage(stderr)
			}
			return exitUsage
		}
		if code == exitOK {
			code = exitFailed
		}
	}
	return code
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `lmbench — benchmark OpenAI-compatible inference engines with KV-cache workloads

Usage:
  lmbench run --engine-url URL --workload NAME [flags]   run a benchmark (lmbench run --help)
  lmbench sweep --sweep KEY=VALUES [run flags]          one run per value of an option (lmbench sweep --help)
  lmbench sim [--port N] [flags]                        serve the built-in simulated engine
  lmbench export --journal PATH [--exporter NAME]...    rebuild result files from a run's journal
  lmbench merge DIR... [-o DIR] [--wait 1h]              one run from the shards of a sharded run (run --shard I/N)
  lmbench barrier --shards N [--listen :7070]           one start and one clock for a sharded run's shards (run --barrier URL)
  lmbench calibrate --journal PATH [--repeat N]         measure the client's own latency for a run's schedule
  lmbench report DIR... [-o report.html]                write a self-contained HTML report of runs (charts, tables, comparison)
  lmbench compare A B [C...] [--json]                   compare runs: deltas, ratios with 95% bootstrap intervals, per-request pairing
  lmbench plugins                                       list the workload and exporter plugins found
  lmbench probe --engine-url URL [--json]               what the engine reports, what lmbench can measure on it
  lmbench completion bash|zsh|fish                      print a shell completion script
  lmbench version

Options also come from a --config file (JSON, YAML or TOML) and LMBENCH_*
environment variables; flags win over both. See lmbench run --help.

Examples:
  lmbench run --engine-url builtin --workload long-doc-qa --tokens-per-gb-kvcache 8192 --kv-cache-volume 1
  lmbench run --engine-url http://localhost:8000 --workload random-prefill --lmcache-url http://localhost:8080
`)
}
