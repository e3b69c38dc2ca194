package ui

import "github.com/lmbench/lmbench/core/sim"

// The subcommands' --help texts, each followed by its flags (but lmbench
// plugins' and completion's, which have none).

// MergeHelp is lmbench merge --help.
const MergeHelp = `Usage: lmbench merge [flags] DIR...

Rebuild one run from the shards of a sharded run (lmbench run --shard I/N).
Each DIR is a shard's output directory, a shard's journal file, a
directory whose subdirectories are shards' output directories (others,
such as an earlier merge's output, are passed over), or an s3:// URL
under which the shards uploaded their directories (lmbench run
--upload-to; the journals are fetched, AWS_ENDPOINT_URL and the AWS_*
credentials as for the run). The merge
checks the shards belong to one run (run id, number of shards, the
configuration's hash) and that none is missing, moves each shard's
timestamps onto the barrier's clock by its measured offset, and computes
every statistic from all the records, as one run does: never from the
shards' summaries.

Flags:
`

// BarrierHelp is lmbench barrier --help.
const BarrierHelp = `Usage: lmbench barrier --shards N [--listen ADDR] [flags]

Give the shards of a sharded run one start and one clock. Each shard, run
with --barrier URL, first reads the barrier's clock a few times (its
offset, from the fastest round trip, is recorded in its journal and used
by lmbench merge), then joins; when all N have joined, every shard is
answered the same start time, Lead from then, and the run id. After its
warmup each shard joins again, and the measured phases start together
(at most a second after the last arrives), so the shards' schedules do.
The barrier exits 0 once every shard has started its measured phase, and
1 when one stopped before (every shard waiting is told why) or --timeout
passed.

Flags:
`

// CalibrateHelp is lmbench calibrate --help.
const CalibrateHelp = `Usage: lmbench calibrate --journal PATH [--repeat N]

Replay a finished run's measured schedule against the built-in engine with
every cost at zero (no prefill, no decode, no cache tiers), started on a
loopback port, through lmbench's own sender on an open-loop timer: request
k leaves at its scheduled offset from the first, with a prompt of its
input tokens (words) and max_tokens its output tokens. The engine costs
nothing, so the TTFT and dispatch lag measured are the client's, for that
schedule on this machine: the latency lmbench itself adds to the run's
figures (the in-process engine shares the CPUs, so it is an upper bound).

Flags:
`

// FitHelp is lmbench fit --help.
const FitHelp = `Usage: lmbench fit RUN|SWEEPDIR... [-o profile.json]

Fit the built-in engine's cost model to finished runs against an engine, so
the built-in engine serves as its twin: the prefill's cost per uncached
token, its growth with the prompt's length and its fixed overhead, the cost
of a cached token loaded from the CPU and disk tiers, the decode step and
its growth with the running batch, and the most requests served at once.
RUN is a run's output directory or its bench_journal.jsonl (per-request
timings, chunk offsets, cached tokens; the engine's metrics, when the run
scraped them, say which tier the hits came from); SWEEPDIR fits every point
of a sweep. Prints each parameter with its standard error, the ones the
runs could not identify and why (they keep the built-in engine's
defaults), and the residuals: each request replayed through the fitted
model, the median and p90 of |predicted - measured| / measured of its
TTFT, TPOT and E2E. Serve the profile with lmbench sim --profile FILE, or
predict a sweep with lmbench sweep --engine-url builtin --sim-profile FILE
(docs/twin.md).

Flags:
`

// ReportHelp is lmbench report --help.
const ReportHelp = `Usage: lmbench report DIR|SWEEPDIR... [-o report.html] [--seed N] [--resamples N]

Write one self-contained HTML page (every style and script inline, the
charts inline SVG: it opens offline) from finished runs. DIR is a run's
output directory or its bench_journal.jsonl; a killed run's figures are
computed from its journal. For each run: its status, latencies, prefix
cache, failures, overhead certificate and configuration as tables, and
charts of TTFT, TPOT, ITL and E2E (CDF and histogram), TTFT over time by
phase and by tag, throughput, requests in flight and dispatch lag over
time, TTFT by tag and the cache block; the engine's running and waiting
requests, KV-cache usage and prefix-cache hit rate over time
(bench_metrics.jsonl), and tables of its per-phase metrics, the cache
ledger, prompt tokens, load and goodput. SWEEPDIR is lmbench sweep's
--output-dir (it holds sweep_summary.json) or that file: its section draws latency
against achieved throughput, goodput and achieved against requested rate,
one point per sweep point, and lists the points. With two runs or more, a comparison
section first: every run against the first (lmbench compare's table),
their distributions overlaid, and per-request pairing when the runs share
their workload and seed. docs/report.md describes every panel.

Flags:
`

// CompareHelp is lmbench compare --help.
const CompareHelp = `Usage: lmbench compare A B [C...] [--json] [--pairs] [--seed N] [--resamples N]

Set finished runs side by side: every run after the first against the
first (A). For each headline metric (TTFT mean and percentiles, TPOT, pooled
ITL, E2E, output and request throughput): both values, the delta, the ratio
and its 95% percentile-bootstrap interval, marked "*" when the interval
excludes 1 (beyond noise). Each run's measured requests are resampled with
replacement, independently (the throughputs: its time windows), from a
seeded generator, so the same runs and seed print the same intervals. When
the runs share their workload and seed, requests are also paired by id: the
distribution of per-request TTFT ratios and the share that got faster,
and, when both recorded their answers (lmbench run --record-outputs),
whether they answered alike: the diverging requests are flagged.
Each run is an output directory or its bench_journal.jsonl.

Flags:
`

// SimHelp is lmbench sim --help.
const SimHelp = `Usage: lmbench sim [flags]

Serve the built-in simulated engine: vLLM's OpenAI-compatible API (/v1/models, /v1/chat/completions,
/v1/completions, /tokenize, /detokenize, /metrics, /reset_prefix_cache, /health) and LMCache's /status,
over a tiered KV cache. It listens on loopback only. The same flags, prefixed --sim-, configure
lmbench run --engine-url builtin; both read the LMBENCH_SIM_* variables.

` + sim.CostModel + `
Flags:
`

// ExportHelp is lmbench export --help.
const ExportHelp = `Usage: lmbench export --journal PATH [--exporter NAME]... [--output-dir DIR] [exporter flags]

Rebuild result files from a run journal.

Flags:
`

// PluginsHelp is lmbench plugins --help; %s is where plugins are looked for.
const PluginsHelp = `Usage: lmbench plugins [list]

Lists the workload and exporter plugins found: kind, name, version, plugin
protocol and path. Plugins are executables named lmbench-<kind>-<name>,
looked for in the directories of LMBENCH_PLUGIN_PATH (a list, like PATH),
then next to the lmbench binary, in its plugins/ subdirectory and in
$XDG_DATA_HOME/lmbench/plugins. The first one of a kind and name wins;
later ones are listed as shadowed.

Searched now: %s
`

// CompletionHelp is lmbench completion --help.
const CompletionHelp = `Usage: lmbench completion bash|zsh|fish

Prints the shell's completion script. It completes subcommands, flags
(the named workload's included), workload and exporter names and option
values. To use it:

  bash:  source <(lmbench completion bash)
  zsh:   source <(lmbench completion zsh)
  fish:  lmbench completion fish | source
`

// ProbeHelp is lmbench probe --help.
const ProbeHelp = `Usage: lmbench probe --engine-url URL [--engine-kind KIND] [--metrics-url URL] [--json]

Which engine serves URL (vLLM, SGLang, Ollama, llama.cpp, TGI, ...), what it
reports and what lmbench can and cannot measure on it. Sends no completion.

Flags:
`
