#!/usr/bin/env bash
# Fails when an import crosses a wall (tests included), reading the import
# lists from `go list`, which sees generated code too:
#   - no package under core/ or cmd/ imports sdk/proto (only sdk/wire
#     meets the generated protobuf code);
#   - nothing in sdk/ imports core/ or a plugin;
#   - plugins import the SDK, never core/ or cmd/;
#   - plugins and the SDK's examples never import sdk/host/... (the loop
#     that drives them is the host's and sdktest's, not an author's API);
#   - the CLI (cmd/lmbench and its internal/ui, tests apart) imports
#     only what a subcommand calls: the orchestration (core/invocation
#     for run and sweep, core/bench and the entry points beside it: probe,
#     sweep, merge, shard, overhead for calibrate, twin for fit,
#     sim, barrier, plugin and pluginset for discovery and launch), the
#     configuration (core/config, core/config/simconfig), the output (core/report,
#     core/htmlreport, core/progress, core/analysis, core/record), its own
#     UI and the protocol's types
#     (sdk/protocol). The mechanisms under them (engine, dispatch, kvcache,
#     tokenize, stats, telemetry, objstore, sdk/host, …) are theirs.
set -euo pipefail
cd "$(dirname "$0")/.."
mod=github.com/lmbench/lmbench
bad=$(go list -f '{{.ImportPath}}{{range .Imports}} {{.}}{{end}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}' work |
	awk -v m="$mod" '
	{
		pkg = $1
		for (i = 2; i <= NF; i++) {
			imp = $i
			if ((index(pkg, m "/core") == 1 || index(pkg, m "/cmd") == 1) && index(imp, m "/sdk/proto/") == 1)
				print pkg " imports " imp " (only sdk/wire may: use package protocol)"
			if (index(pkg, m "/sdk") == 1 && (index(imp, m "/core") == 1 || index(imp, m "/plugins") == 1 || index(imp, m "/cmd") == 1))
				print pkg " imports " imp " (the SDK never imports the host)"
			if (index(pkg, m "/plugins") == 1 && (index(imp, m "/core") == 1 || index(imp, m "/cmd") == 1))
				print pkg " imports " imp " (plugins import only the SDK)"
			if ((index(pkg, m "/plugins") == 1 || index(pkg, m "/sdk/examples") == 1) && index(imp, m "/sdk/host/") == 1)
				print pkg " imports " imp " (the run loop belongs to the host: sdktest drives a plugin through it)"
		}
	}' | sort -u)
cli=$(go list -f '{{.ImportPath}}{{range .Imports}} {{.}}{{end}}' ./cmd/lmbench ./cmd/lmbench/internal/ui |
	awk -v m="$mod" '
	BEGIN {
		n = split("core/invocation core/bench core/probe core/pluginset core/progress core/config/simconfig core/sweep core/merge core/shard core/overhead core/twin core/sim core/barrier core/plugin core/config core/report core/htmlreport core/analysis core/record sdk/protocol cmd/lmbench/internal/", ok, " ")
	}
	{
		pkg = $1
		for (i = 2; i <= NF; i++) {
			imp = $i
			if (index(imp, m "/") != 1)
				continue
			allowed = 0
			for (k = 1; k <= n; k++)
				if (imp == m "/" ok[k] || index(imp, m "/" ok[k]) == 1 && substr(ok[k], length(ok[k])) == "/")
					allowed = 1
			if (!allowed)
				print pkg " imports " imp " (the CLI calls the orchestration, config, output and UI packages: move the work behind one of them)"
		}
	}' | sort -u)
bad=$(printf '%s\n%s' "$bad" "$cli" | sed '/^$/d')
if [ -n "$bad" ]; then
	echo "import walls crossed:"
	echo "$bad"
	exit 1
fi
echo "import walls hold"
