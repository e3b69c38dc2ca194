// Package report renders a run's final numbers: the terminal summary (the
// original's layout, spec §7.1, with P50/P90 decode speed, inter-token
// latency and, for scheduled workloads, dispatch lag added) and
// bench_summary.json (spec §7.3: the original's keys and number format,
// followed by lmbench's additions).
package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

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
}

// Run identifies the run in the JSON summary.
type Run struct {
	ID          string
	Version     string
	Interrupted bool
	HasSchedule bool // dispatch lag is meaningful
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
	}
	label := e.label + ":"
	pad := Width - utf8.RuneCountInString(label) - utf8.RuneCountInString(v)
	return label + strings.Repeat(" ", max(pad, 1)) + v
}

// Terminal writes the summary block.
func Terminal(w io.Writer, cfg Config, run Run, f stats.Final) {
	var b strings.Builder
	title := fmt.Sprintf(" Engine Benchmark Result (%s) ", cfg.Workload)
	if run.Interrupted {
		title = fmt.Sprintf(" Engine Benchmark Result (%s, interrupted) ", cfg.Workload)
	}
	b.WriteString(center(title, Width, '=') + "\n")
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
	b.WriteString(strings.Repeat("=", Width) + "\n")
	io.WriteString(w, b.String())
}

// kv is one ordered JSON member.
type kv struct {
	k string
	v any // string, bool, int, int64, float64, []kv
}

// SummaryJSON renders bench_summary.json: Python's json.dumps(indent=2)
// layout and float format, no trailing newline.
func SummaryJSON(cfg Config, run Run, f stats.Final) []byte {
	doc := []kv{
		{"config", []kv{
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
		}},
		{"results", []kv{
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
		}},
		{"run", []kv{
			{"run_id", run.ID},
			{"lmbench_version", run.Version},
			{"interrupted", run.Interrupted},
		}},
	}
	var b strings.Builder
	writeObject(&b, doc, 0)
	return []byte(b.String())
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
		case string:
			b.WriteString(jsonString(v))
		case bool:
			b.WriteString(strconv.FormatBool(v))
		case int:
			b.WriteString(strconv.Itoa(v))
		case int64:
			b.WriteString(strconv.FormatInt(v, 10))
		case float64:
			b.WriteString(pyrepr.JSONFloat(v))
		}
		if i < len(members)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(strings.Repeat("  ", depth) + "}")
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
