package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/failure"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/stats"
)

//go:generate python3 testdata/gen.py

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got; go test -update rewrites it):\n%s", path, diff)
	}
}

// The want values below were computed with python3's str.center
// (`s.center(width, fill)`, CPython 3.11) and hard-coded here.
func TestCenterMatchesPython(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s     string
		width int
		fill  rune
		want  string
	}{
		{" Engine Benchmark Result (long-doc-qa) ", 56, '=', "======== Engine Benchmark Result (long-doc-qa) ========="},
		{" Engine Benchmark Result (long-doc-qa, interrupted) ", 56, '=', "== Engine Benchmark Result (long-doc-qa, interrupted) =="},
		{" Engine Benchmark Result (random-prefill) ", 56, '=', "======= Engine Benchmark Result (random-prefill) ======="},
		{" Results ", 56, '-', "----------------------- Results ------------------------"},
		{" Time to First Token ", 56, '-', "----------------- Time to First Token ------------------"},
		{" Configuration ", 56, '-', "-------------------- Configuration ---------------------"},
		// Odd margin, odd width: the extra fill goes left.
		{"ab", 5, '*', "**ab*"},
		{"ab", 7, '*', "***ab**"},
		{"abcd", 7, '*', "**abcd*"},
		// Odd margin, even width: the extra fill goes right.
		{"abc", 6, '*', "*abc**"},
		{"a", 4, '*', "*a**"},
		// Even margins.
		{"abc", 5, '*', "*abc*"},
		{"ab", 6, '*', "**ab**"},
		{"abc", 7, '*', "**abc**"},
		{"abcd", 8, '*', "**abcd**"},
		{"", 3, '*', "***"},
		// Width counts characters (code points), not bytes.
		{"naïve", 8, '-', "-naïve--"},
		// As wide or wider than width: unchanged.
		{strings.Repeat("x", 56), 56, '=', strings.Repeat("x", 56)},
		{strings.Repeat("x", 60), 56, '=', strings.Repeat("x", 60)},
		{" Engine Benchmark Result (a-workload-name-that-is-far-too-long-to-fit) ", 56, '=',
			" Engine Benchmark Result (a-workload-name-that-is-far-too-long-to-fit) "},
	}
	for _, tt := range tests {
		t.Run(tt.s, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, center(tt.s, tt.width, tt.fill)); diff != "" {
				t.Errorf("center(%q, %d, %q) (-want +got):\n%s", tt.s, tt.width, tt.fill, diff)
			}
		})
	}
}

// The want values were computed with python3 as
// label + ":" + " " * max(56 - len(label) - 1 - len(v), 1) + v
// where v is "%.2f" % round(x, 2) for floats, str(x) for ints, "N/A" for None.
func TestEntryLayout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		label string
		value any
		want  string
	}{
		{"Successful requests", 2, "Successful requests:                                   2"},
		{"Total input tokens", int64(9223372036854775807), "Total input tokens:                  9223372036854775807"},
		{"Benchmark duration (s)", 1.005, "Benchmark duration (s):                             1.00"},
		{"Benchmark duration (s)", 2.675, "Benchmark duration (s):                             2.67"},
		{"Mean TTFT (ms)", 1234.565, "Mean TTFT (ms):                                  1234.57"},
		{"Mean TTFT (ms)", 0.125, "Mean TTFT (ms):                                     0.12"},
		{"Mean TTFT (ms)", 0.375, "Mean TTFT (ms):                                     0.38"},
		{"P99 TTFT (ms)", 0.0, "P99 TTFT (ms):                                      0.00"},
		{"Mean lag (ms)", -0.004, "Mean lag (ms):                                     -0.00"},
		{"Mean lag (ms)", -0.006, "Mean lag (ms):                                     -0.01"},
		{"Input throughput (tok/s)", 16260.162601626016, "Input throughput (tok/s):                       16260.16"},
		{"Failed requests", nil, "Failed requests:                                     N/A"},
		{"Engine URL", "http://höst:8000", "Engine URL:                             http://höst:8000"},
		// Exactly one space left.
		{"Model", strings.Repeat("x", 49), "Model: " + strings.Repeat("x", 49)},
		{"Model", strings.Repeat("x", 48), "Model:  " + strings.Repeat("x", 48)},
		// Too long: still one space, the line overflows.
		{"Model", strings.Repeat("x", 50), "Model: " + strings.Repeat("x", 50)},
		{"A label so long that the label alone nearly fills it", 12.5, "A label so long that the label alone nearly fills it: 12.50"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, entry{tt.label, tt.value}.String()); diff != "" {
			t.Errorf("entry{%q, %#v} (-want +got):\n%s", tt.label, tt.value, diff)
		}
	}
}

func terminalFixture() (Config, stats.Final) {
	cfg := Config{
		EngineURL: "http://localhost:8000", Model: "meta-llama/Llama-3.1-8B-Instruct", Workload: "long-doc-qa",
		KVCacheVolumeGB: 100, TokensPerGB: 50000, Seed: 42, OutputDir: ".", ExportCSV: true,
	}
	ps := []float64{50, 90, 95, 99, 99.9}
	f := stats.Final{
		Aggregated: stats.Aggregated{
			TotalRequests: 20, SuccessfulRequests: 19, FailedRequests: 1, ElapsedTime: 12.345678,
			MeanTTFTMs: 312.4567, MeanDecodeSpeed: 48.005, MeanRequestLatencyMs: 2001.996,
			InputThroughput: 16260.162601626016, OutputThroughput: 208.1, TotalInputTokens: 200000, TotalOutputTokens: 2432,
		},
		P50TTFTMs: 300, P90TTFTMs: 450.125, P99TTFTMs: 1234.565,
		P50DecodeSpeed: 47.5, P90DecodeSpeed: 49.25, P99DecodeSpeed: 50.999,
		P50RequestLatencyMs: 2000, P90RequestLatencyMs: 2100.5, P99RequestLatencyMs: 2300.75,
		MeanITLMs: 20.833, P50ITLMs: 20, P90ITLMs: 22.5, P99ITLMs: 40.004,
		MeanDispatchLagMs: 0.456, P50DispatchLagMs: 0.3, P99DispatchLagMs: 5.5,
		Percentiles: ps,
		TTFT:        dist(ps, 19, 312.4567, 80.125, 300, 300, 450.125, 600, 1234.565, 1500.5),
		TPOT:        dist(ps, 19, 14.2, 1.5, 14, 14, 16, 16.5, 18.25, 19.999),
		ITL:         dist(ps, 2413, 14.2, 9.75, 10.5, 10.5, 12, 60.5, 61.25, 62.875),
		ITLMethod:   stats.ITLExact,
		E2E:         dist(ps, 19, 2001.996, 120.5, 2000, 2000, 2100.5, 2200, 2300.75, 2400.125),
		// Not defined: printed n/a.
		TTFTFromScheduled: dist(ps, 0, math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()),
		E2EFromScheduled:  dist(ps, 19, 2011.5, 121, 2010, 2010, 2110.5, 2210, 2310.75, 2410.125),
	}
	f.Cache.Warmup = stats.Cache{Requests: 4, PromptTokens: 8000}
	f.Cache.Measure = stats.Cache{Requests: 20, PromptTokens: 200000, CachedTokens: 150000, RequestsWithCache: 15}
	f.Load = stats.Load{RequestedRate: 2, SendRate: 1.62, CompletionRate: 1.539, SlipMax: 12.5,
		Slip: dist(ps, 20, 1.5, 2.25, 0.75, 0.75, 3.5, 4, 9.25, 12.25)}
	f.Goodput = stats.Goodput{SLO: stats.SLO{TTFT: 500, E2E: 2500}, Good: 17, Rate: 1.377,
		TTFT: 0.9, TPOT: math.NaN(), ITL: math.NaN(), E2E: 0.95, All: 0.85}
	return cfg, f
}

// dist is a stats.Dist with values at percentiles ps, in order.
func dist(ps []float64, n int, mean, std, median float64, values ...float64) stats.Dist {
	d := stats.Dist{N: n, Mean: mean, Std: std, Median: median}
	for i, v := range values {
		d.Percentiles = append(d.Percentiles, stats.Quantile{P: ps[i], Value: v})
	}
	return d
}

// naFixture is a run in which every request failed: every mean and
// percentile is not defined (NaN), as a stats.Builder leaves them.
func naFixture() (Config, Run, stats.Final) {
	cfg, _, _ := summaryFixture()
	nan := math.NaN()
	undefined := stats.Dist{Mean: nan, Std: nan, Median: nan,
		Percentiles: []stats.Quantile{{P: 50, Value: nan}, {P: 90, Value: nan}, {P: 99, Value: nan}}}
	f := stats.Final{
		Aggregated: stats.Aggregated{TotalRequests: 2, FailedRequests: 2, ElapsedTime: 0.5,
			MeanTTFTMs: nan, MeanDecodeSpeed: nan, MeanRequestLatencyMs: nan},
		P50TTFTMs: nan, P90TTFTMs: nan, P99TTFTMs: nan,
		P50DecodeSpeed: nan, P90DecodeSpeed: nan, P99DecodeSpeed: nan,
		P50RequestLatencyMs: nan, P90RequestLatencyMs: nan, P99RequestLatencyMs: nan,
		MeanITLMs: nan, P50ITLMs: nan, P90ITLMs: nan, P99ITLMs: nan,
		MeanDispatchLagMs: nan, P50DispatchLagMs: nan, P99DispatchLagMs: nan,
		Percentiles: []float64{50, 90, 99},
		TTFT:        undefined, TPOT: undefined, ITL: undefined, E2E: undefined,
		TTFTFromScheduled: undefined, E2EFromScheduled: undefined,
		ITLMethod: stats.ITLExact,
	}
	f.Cache.Measure = stats.Cache{Requests: 2}
	f.Load = stats.Load{RequestedRate: nan, SendRate: nan, CompletionRate: nan, Slip: undefined, SlipMax: nan}
	f.Goodput = stats.Goodput{Rate: nan, TTFT: nan, TPOT: nan, ITL: nan, E2E: nan, All: nan}
	f.Failures.Measure = failure.Breakdown{Requests: 2, Failed: 2, Kinds: []failure.Count{{
		Kind: failure.Classify("HTTP 404"), Count: 2, ExampleRequest: "doc0_q0",
		Example: `HTTP 404: {"object":"error","message":"The model ` + "`x`" + ` does not exist.","code":404}`,
	}}}
	run := Run{ID: "20250101T000000Z-0a1b2c3d", Version: "0.1.0", Interrupted: true, Status: record.Aborted,
		Title: "engine error HTTP 404", Reason: "the engine answered the first request with an error that every request would get: HTTP 404: " +
			`{"object":"error","message":"The model ` + "`x`" + ` does not exist.","code":404}`,
		Sent: 2, Finished: 2}
	return cfg, run, f
}

// testdata/terminal.golden was rewritten with -update and then checked
// once, byte for byte, against a python3 rendering of the same numbers
// with the spec's rules (str.center, "%.2f" % round(x, 2), right-aligned
// to column 56).
func TestTerminalGolden(t *testing.T) {
	t.Parallel()
	cfg, f := terminalFixture()
	var b bytes.Buffer
	Terminal(&b, cfg, Run{HasSchedule: true}, f)
	golden(t, "terminal.golden", b.Bytes())
}

// The original's sections are unchanged, byte for byte, and come first:
// the lines up to the Dispatch Lag section's end are those the terminal
// printed before lmbench's additions (kept in testdata/terminal_original.golden,
// the golden as it was).
func TestTerminalKeepsTheOriginalFirst(t *testing.T) {
	t.Parallel()
	cfg, f := terminalFixture()
	var b bytes.Buffer
	Terminal(&b, cfg, Run{HasSchedule: true}, f)
	want, err := os.ReadFile(filepath.Join("testdata", "terminal_original.golden"))
	if err != nil {
		t.Fatal(err)
	}
	// The original ended with the footer; the additions come before it.
	prefix := strings.TrimSuffix(string(want), strings.Repeat("=", Width)+"\n")
	if !strings.HasPrefix(b.String(), prefix) {
		t.Errorf("the original's sections changed or moved:\nwant prefix:\n%s\ngot:\n%s", prefix, b.String())
	}
}

// Nothing succeeded: every figure that is not defined prints n/a, the
// original's included (they printed 0.00 before), and the JSON has null.
func TestNotDefinedIsNA(t *testing.T) {
	t.Parallel()
	cfg, run, f := naFixture()
	var b bytes.Buffer
	Terminal(&b, cfg, run, f)
	golden(t, "terminal_na.golden", b.Bytes())
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasSuffix(l, " 0.00") && (strings.Contains(l, "TTFT") || strings.Contains(l, "decode") ||
			strings.Contains(l, "ITL") || strings.Contains(l, "latency")) {
			t.Errorf("a figure with no data prints 0.00: %q", l)
		}
	}
	for _, label := range []string{"Mean TTFT (ms)", "P99 TTFT (ms)", "Mean decode (tok/s)", "Mean ITL (ms)", "TPOT P99 (ms)",
		"ITL P50 (ms)", "E2E std (ms)", "Measured cached/prompt (%)"} {
		if !strings.Contains(b.String(), label+":") || !hasLine(b.String(), label, "n/a") {
			t.Errorf("%s is not n/a:\n%s", label, b.String())
		}
	}
}

func hasLine(out, label, value string) bool {
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, label+":"); ok && strings.TrimSpace(v) == value {
			return true
		}
	}
	return false
}

// Every line follows §7.1 whatever the numbers: 56 columns, a centred
// title and section headers, "Label:" then the value flush right.
func TestTerminalLayoutRules(t *testing.T) {
	t.Parallel()
	cfg, f := terminalFixture()
	var b bytes.Buffer
	Terminal(&b, cfg, Run{HasSchedule: true}, f)
	out := b.String()
	if !strings.HasSuffix(out, "\n") {
		t.Errorf("output does not end with a newline: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if got, want := lines[0], center(" Engine Benchmark Result (long-doc-qa) ", Width, '='); got != want {
		t.Errorf("title = %q, want %q", got, want)
	}
	if got, want := lines[len(lines)-1], strings.Repeat("=", Width); got != want {
		t.Errorf("footer = %q, want %q", got, want)
	}
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n != Width {
			t.Errorf("line %d is %d columns, want %d: %q", i+1, n, Width, l)
		}
		if i == 0 || i == len(lines)-1 || strings.HasPrefix(l, "-") {
			continue
		}
		label, value, ok := strings.Cut(l, ":")
		if !ok || !strings.HasPrefix(value, " ") || strings.HasSuffix(value, " ") || label == "" {
			t.Errorf("line %d is not `Label: value`: %q", i+1, l)
		}
	}
}

func sections(out string) []string {
	var s []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "-") {
			s = append(s, strings.Trim(l, "- "))
		}
	}
	return s
}

func TestTerminalSectionsAndTitle(t *testing.T) {
	t.Parallel()
	base := []string{"Configuration", "Results", "Time to First Token", "Decoding Speed", "Inter-token Latency"}
	// lmbench's additions (changed deliberately: they follow the original's).
	added := []string{"TTFT (vLLM: mean, std, percentiles)", "TPOT (time per output token)", "ITL (pooled gaps)",
		"E2E latency", "From the schedule (due time)", "KV cache", "Load (requested vs achieved)", "Goodput (SLO)", "Failures", "Run"}
	tests := []struct {
		name      string
		run       Run
		title     string
		sections  []string
		forbidden string
	}{
		{"plain", Run{}, "======== Engine Benchmark Result (long-doc-qa) =========", concat(base, added), "lag (ms)"},
		{"scheduled", Run{HasSchedule: true}, "======== Engine Benchmark Result (long-doc-qa) =========",
			concat(base, []string{"Dispatch Lag (sent - scheduled)"}, added), "interrupted"},
		// Title computed with python3: " Engine Benchmark Result (long-doc-qa, interrupted) ".center(56, "=").
		{"interrupted", Run{Interrupted: true}, "== Engine Benchmark Result (long-doc-qa, interrupted) ==", concat(base, added), "Dispatch Lag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, f := terminalFixture()
			var b bytes.Buffer
			Terminal(&b, cfg, tt.run, f)
			out := b.String()
			if got, _, _ := strings.Cut(out, "\n"); got != tt.title {
				t.Errorf("title = %q, want %q", got, tt.title)
			}
			if diff := cmp.Diff(tt.sections, sections(out)); diff != "" {
				t.Errorf("sections (-want +got):\n%s", diff)
			}
			if strings.Contains(out, tt.forbidden) {
				t.Errorf("output contains %q:\n%s", tt.forbidden, out)
			}
		})
	}
}

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// summaryFixture is the input testdata/gen.py renders into summary.json.
func summaryFixture() (Config, Run, stats.Final) {
	tenth, fifth, one, three := 0.1, 0.2, 1.0, 3.0 // variables: rounded at run time, as in Python
	cfg := Config{
		EngineURL: "http://localhost:8000", Model: "test-model", Workload: "long-doc-qa",
		KVCacheVolumeGB: 100, TokensPerGB: 50000, Seed: 42, OutputDir: ".",
		ExportCSV: true, ExportJSON: true, Quiet: false,
	}
	ps := []float64{50, 90, 99, 99.9}
	f := stats.Final{
		Aggregated: stats.Aggregated{
			TotalRequests: 3, SuccessfulRequests: 2, FailedRequests: 1, ElapsedTime: 1.23,
			MeanTTFTMs: 300, MeanDecodeSpeed: tenth + fifth, MeanRequestLatencyMs: 2000.5,
			InputThroughput: 16260.162601626016, OutputThroughput: 1e-05,
			TotalInputTokens: 20000, TotalOutputTokens: 256,
		},
		P50TTFTMs: 100, P90TTFTMs: 1e16, P99TTFTMs: 123456789012345,
		P50DecodeSpeed: 0.0001, P90DecodeSpeed: 1.5e-07, P99DecodeSpeed: one / three,
		P50RequestLatencyMs: 0, P90RequestLatencyMs: -2.5, P99RequestLatencyMs: 1e100,
		MeanITLMs: 12.5, P50ITLMs: 10, P90ITLMs: 20, P99ITLMs: 29.99,
		MeanDispatchLagMs: -0.25, P50DispatchLagMs: 0.5, P99DispatchLagMs: 3,
		Percentiles: ps,
		TTFT:        dist(ps, 2, 300, 100, 300, 300, 380, 398, 399.8),
		TPOT:        dist(ps, 1, 12.5, 0, 12.5, 12.5, 12.5, 12.5, 12.5),
		ITL:         dist(ps, 254, tenth+fifth, 3.25, 10, 10, 20, 29.99, 1e-05),
		ITLMethod:   stats.ITLSketch,
		E2E:         dist(ps, 2, 2000.5, 0.5, 2000.5, 2000.5, 2000.9, 2000.99, 1e16),
		// Not defined: null.
		TTFTFromScheduled: dist(ps, 0, 0, 0, 0, 0, 0, 0, 0),
		E2EFromScheduled:  dist(ps, 2, 2010.5, 10.5, 2010.5, 2010.5, 2018.9, 2020.79, 2020.979),
	}
	f.Cache.Warmup = stats.Cache{Requests: 2, PromptTokens: 20000}
	f.Cache.Measure = stats.Cache{Requests: 3, PromptTokens: 20000, CachedTokens: 19000, RequestsWithCache: 2}
	f.Load = stats.Load{RequestedRate: 4, SendRate: 3.5, CompletionRate: 2 / 1.23,
		Slip: dist(ps, 3, 0.5, 0.25, 0.5, 0.5, 0.9, 0.99, 0.999), SlipMax: 1}
	f.Goodput = stats.Goodput{SLO: stats.SLO{TTFT: 200, TPOT: 50}, Good: 1, Rate: one / 1.23,
		TTFT: one / three, TPOT: 2 / three, ITL: math.NaN(), E2E: math.NaN(), All: one / three}
	f.Failures.Warmup = failure.Breakdown{Requests: 2}
	f.Failures.Measure = failure.Breakdown{Requests: 3, Failed: 1, Kinds: []failure.Count{{
		Kind: failure.Refused, Count: 1, ExampleRequest: "doc1_q0",
		Example: `Post "http://localhost:8000/v1/chat/completions": dial tcp 127.0.0.1:8000: connect: connection refused`,
	}}}
	return cfg, Run{ID: "20250101T000000Z-0a1b2c3d", Version: "0.1.0", Status: record.Completed, Planned: 3, Sent: 3, Finished: 3}, f
}

// escapesFixture is the input testdata/gen.py renders into
// summary_escapes.json: strings that need ensure_ascii escaping.
func escapesFixture() (Config, Run, stats.Final) {
	cfg := Config{
		EngineURL:       "http://h\u00f6st:8000/v1?q=\"x\"&p=a\\b",
		Model:           "mod\u00e8le-\u4e2d\u6587-\U0001F600",
		Workload:        "tab\there\nnl\rcr\bbs\fff\x01\x1f\x7f\u0080\u2028",
		KVCacheVolumeGB: 0.5, TokensPerGB: -1, Seed: -9223372036854775808,
		OutputDir: "/tmp/r\u00e9sultats", Quiet: true,
	}
	return cfg, Run{Version: "v\u00b2", Interrupted: true, Reason: "stopped: \"\u00e9\"\n"}, stats.Final{}
}

// The expected bytes are Python's json.dumps(obj, indent=2) output,
// written by testdata/gen.py (python3; `go generate` reruns it).
func TestSummaryJSONMatchesPython(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file    string
		fixture func() (Config, Run, stats.Final)
	}{
		{"summary.json", summaryFixture},
		{"summary_na.json", naFixture},
		{"summary_escapes.json", escapesFixture},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got := SummaryJSON(tt.fixture())
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("SummaryJSON differs from python3 json.dumps(indent=2) (-want +got):\n%s", diff)
			}
			for i, c := range got {
				if c >= 0x80 || (c < 0x20 && c != '\n') {
					t.Fatalf("byte %d is %#x: output must be ASCII with escapes (ensure_ascii)", i, c)
				}
			}
			if !json.Valid(got) {
				t.Errorf("not valid JSON:\n%s", got)
			}
		})
	}
}

// objectKeys returns the keys of the JSON object at the decoder's position,
// in document order, and the raw value of each.
func objectKeys(t *testing.T, data []byte) ([]string, map[string]json.RawMessage) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %v %v", tok, err)
	}
	var keys []string
	vals := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		k := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
		vals[k] = v
	}
	return keys, vals
}

func TestSummaryJSONKeyOrder(t *testing.T) {
	t.Parallel()
	top, vals := objectKeys(t, SummaryJSON(summaryFixture()))
	// The original's three, then lmbench's additions (changed deliberately).
	if diff := cmp.Diff([]string{"config", "results", "run", "metrics", "cache", "failures", "load", "goodput"}, top); diff != "" {
		t.Errorf("top-level keys (-want +got):\n%s", diff)
	}
	config, _ := objectKeys(t, vals["config"])
	// §7.3: the EngineBenchConfig fields.
	wantConfig := []string{"engine_url", "model", "workload", "kv_cache_volume_gb", "tokens_per_gb_kvcache",
		"seed", "output_dir", "export_csv", "export_json", "quiet"}
	if diff := cmp.Diff(wantConfig, config); diff != "" {
		t.Errorf("config keys (-want +got):\n%s", diff)
	}
	results, _ := objectKeys(t, vals["results"])
	// §4.1: AggregatedStats then FinalStats, in this order, before any addition.
	spec := []string{"total_requests", "successful_requests", "failed_requests", "elapsed_time",
		"mean_ttft_ms", "mean_decode_speed", "mean_request_latency_ms", "input_throughput",
		"output_throughput", "total_input_tokens", "total_output_tokens",
		"p50_ttft_ms", "p90_ttft_ms", "p99_ttft_ms", "p50_decode_speed", "p90_decode_speed",
		"p99_decode_speed", "p50_request_latency_ms", "p90_request_latency_ms", "p99_request_latency_ms"}
	if len(results) < len(spec) {
		t.Fatalf("results has %d keys, want at least the spec's %d", len(results), len(spec))
	}
	if diff := cmp.Diff(spec, results[:len(spec)]); diff != "" {
		t.Errorf("results keys (-want +got):\n%s", diff)
	}
	seen := map[string]bool{}
	for _, k := range results {
		if seen[k] {
			t.Errorf("results key %q repeated", k)
		}
		seen[k] = true
	}
	run, _ := objectKeys(t, vals["run"])
	if diff := cmp.Diff([]string{"run_id", "lmbench_version", "interrupted", "status", "reason",
		"planned_requests", "sent_requests", "finished_requests"}, run); diff != "" {
		t.Errorf("run keys (-want +got):\n%s", diff)
	}
	metrics, mvals := objectKeys(t, vals["metrics"])
	wantMetrics := []string{"percentiles", "ttft_ms", "tpot_ms", "itl_ms", "itl_percentiles", "e2e_ms",
		"ttft_from_scheduled_ms", "e2e_from_scheduled_ms"}
	if diff := cmp.Diff(wantMetrics, metrics); diff != "" {
		t.Errorf("metrics keys (-want +got):\n%s", diff)
	}
	ttft, _ := objectKeys(t, mvals["ttft_ms"])
	if diff := cmp.Diff([]string{"count", "mean", "std", "median", "p50", "p90", "p99", "p99.9"}, ttft); diff != "" {
		t.Errorf("metrics.ttft_ms keys (-want +got):\n%s", diff)
	}
	cache, cvals := objectKeys(t, vals["cache"])
	if diff := cmp.Diff([]string{"warmup", "measure"}, cache); diff != "" {
		t.Errorf("cache keys (-want +got):\n%s", diff)
	}
	measure, _ := objectKeys(t, cvals["measure"])
	if diff := cmp.Diff([]string{"requests", "prompt_tokens", "cached_tokens", "cached_ratio", "requests_with_cached_tokens"}, measure); diff != "" {
		t.Errorf("cache.measure keys (-want +got):\n%s", diff)
	}
}

// Escapes decode back to the original strings (Go's decoder joins the
// surrogate pair), so the escaping loses nothing.
func TestSummaryJSONStringsRoundTrip(t *testing.T) {
	t.Parallel()
	cfg, run, f := escapesFixture()
	var doc struct {
		Config struct {
			EngineURL string `json:"engine_url"`
			Model     string `json:"model"`
			Workload  string `json:"workload"`
			OutputDir string `json:"output_dir"`
		} `json:"config"`
		Run struct {
			Version string `json:"lmbench_version"`
		} `json:"run"`
	}
	if err := json.Unmarshal(SummaryJSON(cfg, run, f), &doc); err != nil {
		t.Fatal(err)
	}
	got := []string{doc.Config.EngineURL, doc.Config.Model, doc.Config.Workload, doc.Config.OutputDir, doc.Run.Version}
	want := []string{cfg.EngineURL, cfg.Model, cfg.Workload, cfg.OutputDir, run.Version}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded strings (-want +got):\n%s", diff)
	}
}

// The header says how the run ended, and a title too wide for one line
// wraps: every word is kept, and every line is centred between fills.
func TestTerminalStatusHeader(t *testing.T) {
	t.Parallel()
	long := "a-workload-name-that-is-far-too-long-to-fit-on-one-line-at-all"
	tests := []struct {
		name     string
		workload string
		run      Run
		want     []string // the header's lines
	}{
		{"completed", "long-doc-qa", Run{Status: record.Completed},
			[]string{"======== Engine Benchmark Result (long-doc-qa) ========="}},
		{"interrupted", "long-doc-qa", Run{Status: record.Interrupted, Interrupted: true},
			[]string{"== Engine Benchmark Result (long-doc-qa, interrupted) =="}},
		{"interrupted without a status", "long-doc-qa", Run{Interrupted: true},
			[]string{"== Engine Benchmark Result (long-doc-qa, interrupted) =="}},
		{"aborted", "long-doc-qa", Run{Status: record.Aborted, Interrupted: true, Title: "engine unreachable"},
			[]string{"=============== Engine Benchmark Result ================", "====== (long-doc-qa, aborted: engine unreachable) ======"}},
		{"aborted, short", "mrc", Run{Status: record.Aborted, Title: "warmup failed"},
			[]string{"=============== Engine Benchmark Result ================", "============ (mrc, aborted: warmup failed) ============="}},
		{"a word wider than a line", long, Run{},
			[]string{"=============== Engine Benchmark Result ================", " (" + long + ") "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, f := terminalFixture()
			cfg.Workload = tt.workload
			var b bytes.Buffer
			Terminal(&b, cfg, tt.run, f)
			lines := strings.Split(b.String(), "\n")
			if diff := cmp.Diff(tt.want, lines[:len(tt.want)]); diff != "" {
				t.Errorf("header (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(lines[len(tt.want)], "-") {
				t.Errorf("line after the header = %q, want the first section", lines[len(tt.want)])
			}
			// Nothing of the title is lost.
			var words []string
			for _, l := range tt.want {
				words = append(words, strings.Fields(strings.Trim(l, "="))...)
			}
			if got, want := strings.Join(words, " "), Title(cfg, tt.run); got != want {
				t.Errorf("header words %q, want the title %q", got, want)
			}
		})
	}
}

// The Run section's counts and reason, and each phase's failures with an
// example of each kind.
func TestTerminalRunAndFailures(t *testing.T) {
	t.Parallel()
	cfg, run, f := naFixture()
	f.Failures.Warmup = failure.Breakdown{Requests: 4, Failed: 1, Kinds: []failure.Count{{
		Kind: failure.Classify("HTTP 500"), Count: 1, ExampleRequest: "warmup_doc2", Example: "HTTP 500: " + strings.Repeat("x", 300)}}}
	run.Planned = 40
	var b bytes.Buffer
	Terminal(&b, cfg, run, f)
	out := b.String()
	for _, want := range []string{
		"Warmup failed:                                    1 of 4\n  HTTP 500:                                            1\n    e.g. warmup_doc2: HTTP 500: xxx",
		"Measured failed:                                  2 of 2\n  HTTP 404:                                            2\n    e.g. doc0_q0: HTTP 404: {",
		"Status:                                          aborted\nPlanned requests:                                     40\n" +
			"Sent requests:                                         2\nFinished requests:                                     2\nReason: the engine",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// A long example is cut in the terminal (bench_summary.json has it whole).
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "    e.g. ") && len(l) > len("    e.g. ")+exampleWidth+len("…") {
			t.Errorf("example line of %d bytes: %q", len(l), l)
		}
	}
	// The reason is wrapped, not cut: its words all appear, in order.
	_, reason, _ := strings.Cut(out, "Reason: ")
	reason, _, _ = strings.Cut(reason, "\n====")
	if got := strings.Join(strings.Fields(reason), " "); got != run.Reason {
		t.Errorf("reason in the terminal %q, want %q", got, run.Reason)
	}
	for _, l := range strings.Split(reason, "\n") {
		if utf8.RuneCountInString(l) > Width {
			t.Errorf("reason line wider than %d: %q", Width, l)
		}
	}
}
