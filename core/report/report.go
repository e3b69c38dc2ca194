// Package report renders a run's final numbers: the terminal summary (the
// original's layout, spec §7.1, with P50/P90 decode speed, inter-token
// latency and, for scheduled workloads, dispatch lag added; then vLLM's
// metrics, the figures from the schedule and the KV cache block) and
// bench_summary.json (spec §7.3: the original's keys and number format,
// followed by lmbench's additions). A figure that is not defined (NaN in
// stats.Final) prints as "n/a" and is written as null.
package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lmbench/lmbench/core/failure"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/stats"
	"github.com/lmbench/lmbench/sdk/pyrepr"
)

// Config is the run configuration reported with the results (the
// original's EngineBenchConfig fields). It never holds secrets.
type Config struct {
	EngineURL       string
	Model           string
	Workload        string
	KVCacheVolumeGB float64
	TokensPerGB     int64
	Seed            int64
	OutputDir       string
	ExportCSV       bool
	ExportJSON      bool
	Quiet           bool
	// Percentiles are those --percentiles asked for, ascending. The
	// summary prints those its numbers were computed with
	// (stats.Final.Percentiles: the host reads the run's recorded
	// configuration); these only when it has none (the numbers could not
	// be computed), as not defined.
	Percentiles []float64
	// Tokenizer is what prompt lengths were counted in ("engine",
	// "words"; "" when not recorded, as in a re-export).
	Tokenizer string
	// Sizing is what counting prompt tokens cost (nil: no tokenizer
	// counted, or not recorded).
	Sizing *Sizing
	// Sim are the built-in engine's settings (with --engine-url builtin),
	// from the run's recorded configuration (SimSettings); the summary's
	// config ends with them.
	Sim []Setting
	// Options are the workload's options as recorded (WorkloadSettings),
	// by config key: the summary's config holds them before Sim.
	Options []Setting
}

// Run identifies the run and says how it ended.
type Run struct {
	ID      string
	Version string
	// Interrupted: the run was cut short, by Ctrl-C or by an abort (the
	// original's key; Status says which).
	Interrupted bool
	// Status is how the run ended ("" reads as completed, or interrupted
	// when Interrupted); Title is the reason in a few words for the
	// header ("engine unreachable"), Reason the whole of it.
	Status        record.Status
	Title, Reason string
	// The measured phase's requests: Planned (0: not known), sent to
	// the engine, and finished (journalled).
	Planned, Sent, Finished int
	HasSchedule             bool // dispatch lag is meaningful
	// Overhead is the run's overhead certificate; nil: none (a summary
	// computed from a killed run's journal).
	Overhead *Overhead
	// Engine is what the engine's /metrics said; nil: not scraped.
	Engine *EngineMetrics
	// Ledger is the cache reset's check and the cache ledger; nil: none
	// (a summary recomputed from a journal).
	Ledger *CacheLedger
	// EngineProfile is the engine as lmbench found it; nil: not known (a
	// summary recomputed from a journal).
	EngineProfile *EngineProfile
	// ShortUnderIgnoreEOS counts the requests that asked for exactly
	// max_tokens (ignore_eos) and got fewer: the engine ignored it.
	ShortUnderIgnoreEOS int
	// Shard is this run's part of a sharded run (nil: not a shard);
	// Shards are the parts of a merged run (nil: not merged).
	Shard  *record.Shard
	Shards []ShardPart
}

// Width of the terminal summary.
const Width = 56

// center is Python's str.center.
func center(s string, width int, fill rune) string {
	n := utf8.RuneCountInString(s)
	if n >= width {
		return s
	}
	marg := width - n
	left := marg/2 + (marg & width & 1)
	return strings.Repeat(string(fill), left) + s + strings.Repeat(string(fill), marg-left)
}

type entry struct {
	label string
	value any // string, int, int64, float64 or nil
}

func (e entry) String() string {
	var v string
	switch x := e.value.(type) {
	case nil:
		v = "N/A"
	case string:
		v = x
	case int:
		v = strconv.Itoa(x)
	case int64:
		v = strconv.FormatInt(x, 10)
	case float64:
		v = fmt.Sprintf("%.2f", x)
		if math.IsNaN(x) {
			v = "n/a"
		}
	}
	label := e.label + ":"
	pad := Width - utf8.RuneCountInString(label) - utf8.RuneCountInString(v)
	return label + strings.Repeat(" ", max(pad, 1)) + v
}

// cachedUnknown: the engine reports no cached tokens, so the cached
// figures are not known (n/a), not 0.
func (run Run) cachedUnknown() bool {
	return run.EngineProfile != nil && run.EngineProfile.CachedTokens == ""
}

// status is how run ended, from Interrupted when Status is not set.
func (run Run) status() record.Status {
	switch {
	case run.Status != "":
		return run.Status
	case run.Interrupted:
		return record.Interrupted
	}
	return record.Completed
}

// Title is the summary's title: "Engine Benchmark Result (long-doc-qa)",
// with ", interrupted" or ", aborted: <title>" when the run did not
// complete.
func Title(cfg Config, run Run) string {
	switch run.status() {
	case record.Interrupted:
		return fmt.Sprintf("Engine Benchmark Result (%s, interrupted)", cfg.Workload)
	case record.Aborted:
		why := run.Title
		if why == "" {
			why = "see the reason"
		}
		return fmt.Sprintf("Engine Benchmark Result (%s, aborted: %s)", cfg.Workload, why)
	}
	return fmt.Sprintf("Engine Benchmark Result (%s)", cfg.Workload)
}

// titleLines centres title in Width between '=' fills, as the original
// does, wrapping it at spaces over several lines when it would not leave
// a fill on each side. Nothing is cut: a word wider than a line gets a
// line of its own.
func titleLines(title string) []string {
	const room = Width - 4 // leaves a space and a fill on each side
	if utf8.RuneCountInString(title) <= room {
		// One line: exactly the original's layout.
		return []string{center(" "+title+" ", Width, '=')}
	}
	// The parenthesis starts a line of its own.
	var lines []string
	head, rest, ok := strings.Cut(title, " (")
	if ok {
		lines = append(wrap(head, room), wrap("("+rest, room)...)
	} else {
		lines = wrap(title, room)
	}
	for i, l := range lines {
		lines[i] = center(" "+l+" ", Width, '=')
	}
	return lines
}

// Terminal writes the summary block.
func Terminal(w io.Writer, cfg Config, run Run, f stats.Final) {
	var b strings.Builder
	for _, l := range titleLines(Title(cfg, run)) {
		b.WriteString(l + "\n")
	}
	section := func(name string, entries ...entry) {
		b.WriteString(center(" "+name+" ", Width, '-') + "\n")
		for _, e := range entries {
			b.WriteString(e.String() + "\n")
		}
	}
	section("Configuration",
		entry{"Engine URL", cfg.EngineURL}, entry{"Model", cfg.Model}, entry{"Workload", cfg.Workload})
	section("Results",
		entry{"Successful requests", f.SuccessfulRequests},
		entry{"Failed requests", f.FailedRequests},
		entry{"Benchmark duration (s)", f.ElapsedTime},
		entry{"Total input tokens", f.TotalInputTokens},
		entry{"Total output tokens", f.TotalOutputTokens},
		entry{"Input throughput (tok/s)", f.InputThroughput},
		entry{"Output throughput (tok/s)", f.OutputThroughput})
	section("Time to First Token",
		entry{"Mean TTFT (ms)", f.MeanTTFTMs}, entry{"P50 TTFT (ms)", f.P50TTFTMs},
		entry{"P90 TTFT (ms)", f.P90TTFTMs}, entry{"P99 TTFT (ms)", f.P99TTFTMs})
	section("Decoding Speed",
		entry{"Mean decode (tok/s)", f.MeanDecodeSpeed}, entry{"P50 decode (tok/s)", f.P50DecodeSpeed},
		entry{"P90 decode (tok/s)", f.P90DecodeSpeed}, entry{"P99 decode (tok/s)", f.P99DecodeSpeed})
	section("Inter-token Latency",
		entry{"Mean ITL (ms)", f.MeanITLMs}, entry{"P50 ITL (ms)", f.P50ITLMs},
		entry{"P90 ITL (ms)", f.P90ITLMs}, entry{"P99 ITL (ms)", f.P99ITLMs})
	if run.HasSchedule {
		section("Dispatch Lag (sent - scheduled)",
			entry{"Mean lag (ms)", f.MeanDispatchLagMs}, entry{"P50 lag (ms)", f.P50DispatchLagMs},
			entry{"P99 lag (ms)", f.P99DispatchLagMs})
	}
	// lmbench's additions, after the original's sections.
	ps := percentiles(cfg, f)
	section("TTFT (vLLM: mean, std, percentiles)", distEntries("TTFT", f.TTFT, ps)...)
	section("TPOT (time per output token)", distEntries("TPOT", f.TPOT, ps)...)
	section("ITL (pooled gaps)", append(distEntries("ITL", f.ITL, ps),
		entry{"ITL percentiles", method(f.ITLMethod)})...)
	section("E2E latency", distEntries("E2E", f.E2E, ps)...)
	section("From the schedule (due time)", append(distEntries("TTFT from due", f.TTFTFromScheduled, ps),
		distEntries("E2E from due", f.E2EFromScheduled, ps)...)...)
	unknown := run.cachedUnknown()
	section("KV cache", append(cacheEntries("Warmup", f.Cache.Warmup, unknown), cacheEntries("Measured", f.Cache.Measure, unknown)...)...)
	if e := promptEntries(cfg.Tokenizer, f.Prompts.Warmup, f.Prompts.Measure); e != nil {
		section("Prompt tokens", e...)
	}
	b.WriteString(sizingSection(cfg.Sizing))
	b.WriteString(loadSections(f, ps))
	b.WriteString(overheadSection(run.Overhead))
	b.WriteString(engineSection(run.Engine, f))
	b.WriteString(ledgerSection(run.Ledger))
	b.WriteString(streamSection(run, f))
	b.WriteString(scoresSection(f.Scores))
	b.WriteString(shardSection(run))
	section("Failures", failureEntry("Warmup", f.Failures.Warmup))
	b.WriteString(failureLines(f.Failures.Warmup))
	b.WriteString(failureEntry("Measured", f.Failures.Measure).String() + "\n")
	b.WriteString(failureLines(f.Failures.Measure))
	section("Run", runEntries(run)...)
	if run.Reason != "" {
		for i, l := range wrap("Reason: "+run.Reason, Width-2) {
			if i > 0 {
				l = "  " + l
			}
			b.WriteString(l + "\n")
		}
	}
	b.WriteString(strings.Repeat("=", Width) + "\n")
	io.WriteString(w, b.String())
}

// failureEntry is a phase's failed count, "3 of 20".
func failureEntry(phase string, fb failure.Breakdown) entry {
	return entry{phase + " failed", fmt.Sprintf("%d of %d", fb.Failed, fb.Requests)}
}

// exampleWidth caps an example message in the terminal, in bytes; the
// whole text is in bench_summary.json and the results' error column.
const exampleWidth = 160

// failureLines are a phase's kinds with their counts, each with an
// example: "  connection refused: 12" then "    e.g. doc3_q1: Post …".
func failureLines(fb failure.Breakdown) string {
	var b strings.Builder
	for _, c := range fb.Kinds {
		b.WriteString(entry{"  " + c.Label, c.Count}.String() + "\n")
		ex := c.Example
		if c.ExampleRequest != "" {
			ex = c.ExampleRequest + ": " + ex
		}
		b.WriteString("    e.g. " + strings.ReplaceAll(failure.Truncate(ex, exampleWidth), "\n", " ") + "\n")
		for i, line := range wrap(c.Hint, Width-6) {
			if i == 0 {
				line = "why? " + line
			}
			b.WriteString("    " + line + "\n")
		}
	}
	return b.String()
}

// runEntries say how the run ended and how far the measured phase got.
func runEntries(run Run) []entry {
	var planned any = "n/a"
	if run.Planned > 0 {
		planned = run.Planned
	}
	return []entry{
		{"Status", string(run.status())},
		{"Planned requests", planned},
		{"Sent requests", run.Sent},
		{"Finished requests", run.Finished},
	}
}

// percentiles are those f was computed with, or, when it has none (the
// numbers could not be computed), those configured, all not defined.
func percentiles(cfg Config, f stats.Final) []float64 {
	if f.Percentiles != nil {
		return f.Percentiles
	}
	return cfg.Percentiles
}

// distEntries are a Dist's lines: "TPOT mean (ms)", "TPOT std (ms)",
// "TPOT median (ms)", then "TPOT P99.9 (ms)" for each percentile.
func distEntries(name string, d stats.Dist, ps []float64) []entry {
	vals := distValues(d, ps)
	out := []entry{{name + " mean (ms)", vals[0]}, {name + " std (ms)", vals[1]}, {name + " median (ms)", vals[2]}}
	for i, p := range ps {
		out = append(out, entry{name + " P" + stats.FormatPercentile(p) + " (ms)", vals[3+i]})
	}
	return out
}

// distValues are d's mean, std, median and its value at each of ps, NaN
// where not defined (or not computed).
func distValues(d stats.Dist, ps []float64) []float64 {
	out := make([]float64, 3+len(ps))
	for i := range out {
		out[i] = math.NaN()
	}
	if !d.Defined() {
		return out
	}
	out[0], out[1], out[2] = d.Mean, d.Std, d.Median
	for i, p := range ps {
		if i < len(d.Percentiles) && d.Percentiles[i].P == p {
			out[3+i] = d.Percentiles[i].Value
		}
	}
	return out
}

func cacheEntries(phase string, c stats.Cache, unknown bool) []entry {
	if unknown { // the engine reports no cached tokens: not 0, not known
		return []entry{{phase + " requests", c.Requests}, {phase + " prompt tokens", c.PromptTokens},
			{phase + " cached tokens", "n/a"}, {phase + " cached/prompt (%)", "n/a"}, {phase + " requests with cached tokens", "n/a"}}
	}
	return []entry{
		{phase + " requests", c.Requests},
		{phase + " prompt tokens", c.PromptTokens},
		{phase + " cached tokens", c.CachedTokens},
		{phase + " cached/prompt (%)", c.Ratio() * 100},
		{phase + " requests with cached tokens", c.RequestsWithCache},
	}
}

// method is how ITL's percentiles were computed, "n/a" when they were not.
func method(m string) string {
	if m == "" {
		return "n/a"
	}
	return m
}

// kv is one ordered JSON member.
type kv struct {
	k string
	v any // string, bool, int, int64, float64 (NaN: null), []float64, []string, []kv, [][]kv, nil (null)
}

// SummaryJSON renders bench_summary.json: Python's json.dumps(indent=2)
// layout and float format, no trailing newline.
func SummaryJSON(cfg Config, run Run, f stats.Final) []byte {
	ps := percentiles(cfg, f)
	doc := []kv{
		{"config", configJSON(cfg)},
		{"results", resultsJSON(f)},
		{"run", runJSON(run)},
		// lmbench's additions, after the original's keys.
		{"metrics", metricsJSON(f, ps)},
		{"cache", []kv{
			{"warmup", cacheJSON(f.Cache.Warmup, run.cachedUnknown())},
			{"measure", cacheJSON(f.Cache.Measure, run.cachedUnknown())},
		}},
		{"failures", []kv{
			{"warmup", failuresJSON(f.Failures.Warmup)},
			{"measure", failuresJSON(f.Failures.Measure)},
		}},
	}
	doc = withPrompts(doc, cfg.Tokenizer, f.Prompts.Warmup, f.Prompts.Measure)
	doc = withSizing(doc, cfg.Sizing)
	doc = withLoad(doc, f, ps)
	doc = withOverhead(doc, run.Overhead)
	doc = withEngineMetrics(doc, run.Engine)
	doc = withCacheLedger(doc, run.Ledger)
	doc = withEngineProfile(doc, run.EngineProfile)
	doc = withStreamChecks(doc, run, f)
	doc = withScores(doc, f.Scores)
	doc = withShards(doc, run)
	var b strings.Builder
	writeObject(&b, doc, 0)
	return []byte(b.String())
}

// configJSON is the summary's config block: the original's keys, the
// workload's options, then the built-in engine's settings.
func configJSON(cfg Config) []kv {
	return append([]kv{
		{"engine_url", cfg.EngineURL},
		{"model", cfg.Model},
		{"workload", cfg.Workload},
		{"kv_cache_volume_gb", cfg.KVCacheVolumeGB},
		{"tokens_per_gb_kvcache", cfg.TokensPerGB},
		{"seed", cfg.Seed},
		{"output_dir", cfg.OutputDir},
		{"export_csv", cfg.ExportCSV},
		{"export_json", cfg.ExportJSON},
		{"quiet", cfg.Quiet},
	}, append(members(cfg.Options), members(cfg.Sim)...)...)
}

// resultsJSON is the summary's results block: the original's figures.
func resultsJSON(f stats.Final) []kv {
	return []kv{
		{"total_requests", f.TotalRequests},
		{"successful_requests", f.SuccessfulRequests},
		{"failed_requests", f.FailedRequests},
		{"elapsed_time", f.ElapsedTime},
		{"mean_ttft_ms", f.MeanTTFTMs},
		{"mean_decode_speed", f.MeanDecodeSpeed},
		{"mean_request_latency_ms", f.MeanRequestLatencyMs},
		{"input_throughput", f.InputThroughput},
		{"output_throughput", f.OutputThroughput},
		{"total_input_tokens", f.TotalInputTokens},
		{"total_output_tokens", f.TotalOutputTokens},
		{"p50_ttft_ms", f.P50TTFTMs},
		{"p90_ttft_ms", f.P90TTFTMs},
		{"p99_ttft_ms", f.P99TTFTMs},
		{"p50_decode_speed", f.P50DecodeSpeed},
		{"p90_decode_speed", f.P90DecodeSpeed},
		{"p99_decode_speed", f.P99DecodeSpeed},
		{"p50_request_latency_ms", f.P50RequestLatencyMs},
		{"p90_request_latency_ms", f.P90RequestLatencyMs},
		{"p99_request_latency_ms", f.P99RequestLatencyMs},
		{"mean_itl_ms", f.MeanITLMs},
		{"p50_itl_ms", f.P50ITLMs},
		{"p90_itl_ms", f.P90ITLMs},
		{"p99_itl_ms", f.P99ITLMs},
		{"mean_dispatch_lag_ms", f.MeanDispatchLagMs},
		{"p50_dispatch_lag_ms", f.P50DispatchLagMs},
		{"p99_dispatch_lag_ms", f.P99DispatchLagMs},
	}
}

// runJSON is the summary's run block: how the run went.
func runJSON(run Run) []kv {
	return []kv{
		{"run_id", run.ID},
		{"lmbench_version", run.Version},
		{"interrupted", run.Interrupted},
		{"status", string(run.status())},
		{"reason", orNull(run.Reason)},
		{"planned_requests", orNullInt(run.Planned)},
		{"sent_requests", run.Sent},
		{"finished_requests", run.Finished},
	}
}

// metricsJSON is the distributions, at the run's percentiles.
func metricsJSON(f stats.Final, ps []float64) []kv {
	return []kv{
		{"percentiles", ps},
		{"ttft_ms", distJSON(f.TTFT, ps)},
		{"tpot_ms", distJSON(f.TPOT, ps)},
		{"itl_ms", distJSON(f.ITL, ps)},
		{"itl_percentiles", orNull(f.ITLMethod)},
		{"e2e_ms", distJSON(f.E2E, ps)},
		{"ttft_from_scheduled_ms", distJSON(f.TTFTFromScheduled, ps)},
		{"e2e_from_scheduled_ms", distJSON(f.E2EFromScheduled, ps)},
	}
}

// distJSON is a Dist as an object: count, mean, std, median, then "p50",
// "p99.9", … for each percentile.
func distJSON(d stats.Dist, ps []float64) []kv {
	vals := distValues(d, ps)
	out := []kv{{"count", d.N}, {"mean", vals[0]}, {"std", vals[1]}, {"median", vals[2]}}
	for i, p := range ps {
		out = append(out, kv{"p" + stats.FormatPercentile(p), vals[3+i]})
	}
	return out
}

func cacheJSON(c stats.Cache, unknown bool) []kv {
	if unknown {
		return []kv{{"requests", c.Requests}, {"prompt_tokens", c.PromptTokens}, {"cached_tokens", nil},
			{"cached_ratio", nil}, {"requests_with_cached_tokens", nil}}
	}
	return []kv{
		{"requests", c.Requests},
		{"prompt_tokens", c.PromptTokens},
		{"cached_tokens", c.CachedTokens},
		{"cached_ratio", c.Ratio()},
		{"requests_with_cached_tokens", c.RequestsWithCache},
	}
}

// failuresJSON is a phase's failures: how many of how many, then each
// kind with its count and one example.
func failuresJSON(fb failure.Breakdown) []kv {
	kinds := make([][]kv, len(fb.Kinds))
	for i, c := range fb.Kinds {
		kinds[i] = []kv{
			{"kind", c.ID},
			{"label", c.Label},
			{"connection", c.Connection},
			{"count", c.Count},
			{"example", c.Example},
			{"example_request_id", c.ExampleRequest},
		}
	}
	return []kv{
		{"requests", fb.Requests},
		{"failed", fb.Failed},
		{"kinds", kinds},
	}
}

// orNullInt is n, or null when 0 (not known).
func orNullInt(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

// orNull is s, or null when empty.
func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func writeObject(b *strings.Builder, members []kv, depth int) {
	b.WriteString("{\n")
	for i, m := range members {
		b.WriteString(strings.Repeat("  ", depth+1))
		b.WriteString(jsonString(m.k))
		b.WriteString(": ")
		switch v := m.v.(type) {
		case []kv:
			writeObject(b, v, depth+1)
		case []float64:
			writeFloats(b, v, depth+1)
		case []string:
			writeStrings(b, v, depth+1)
		case [][]kv:
			writeObjects(b, v, depth+1)
		case string:
			b.WriteString(jsonString(v))
		case bool:
			b.WriteString(strconv.FormatBool(v))
		case int:
			b.WriteString(strconv.Itoa(v))
		case int64:
			b.WriteString(strconv.FormatInt(v, 10))
		case float64:
			b.WriteString(jsonFloat(v))
		case nil:
			b.WriteString("null")
		}
		if i < len(members)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(strings.Repeat("  ", depth) + "}")
}

// writeObjects writes an array of objects as json.dumps(indent=2) does,
// "[]" when empty.
func writeObjects(b *strings.Builder, v [][]kv, depth int) {
	if len(v) == 0 {
		b.WriteString("[]")
		return
	}
	b.WriteString("[\n")
	for i, x := range v {
		b.WriteString(strings.Repeat("  ", depth+1))
		writeObject(b, x, depth+1)
		if i < len(v)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(strings.Repeat("  ", depth) + "]")
}

// writeFloats writes an array as json.dumps(indent=2) does: one element a
// line, "[]" when empty.
func writeFloats(b *strings.Builder, v []float64, depth int) {
	if len(v) == 0 {
		b.WriteString("[]")
		return
	}
	b.WriteString("[\n")
	for i, x := range v {
		b.WriteString(strings.Repeat("  ", depth+1) + jsonFloat(x))
		if i < len(v)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(strings.Repeat("  ", depth) + "]")
}

// jsonFloat is Python's float repr, null for a figure that is not
// defined (NaN; Python would write NaN, which is not JSON).
func jsonFloat(f float64) string {
	if math.IsNaN(f) {
		return "null"
	}
	return pyrepr.JSONFloat(f)
}

// jsonString escapes like Python's json.dumps (ensure_ascii=True).
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || (r >= 0x7f && r < 0x10000):
			fmt.Fprintf(&b, `\u%04x`, r)
		case r >= 0x10000:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
