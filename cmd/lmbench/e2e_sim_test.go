package main

// End-to-end tests of the built-in engine: the real lmbench binary, the
// real plugin binaries, and `--engine-url builtin`.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// column returns the values of the named CSV column.
func column(t *testing.T, rows [][]string, name string) []string {
	t.Helper()
	i := slices.Index(rows[0], name)
	if i < 0 {
		t.Fatalf("no column %q in %v", name, rows[0])
	}
	var out []string
	for _, r := range rows[1:] {
		out = append(out, r[i])
	}
	return out
}

// TestBuiltinEngineTokensPerGBFromStatus runs long-doc-qa on the built-in
// engine without --tokens-per-gb-kvcache: the run takes it from the
// engine's LMCache-shaped /status, as --lmcache-url would, and sizes the
// workload with it.
func TestBuiltinEngineTokensPerGBFromStatus(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", "builtin", "--workload", "long-doc-qa",
		"--kv-cache-volume", "0.5", "--ldqa-document-length", "500", "--ldqa-query-per-document", "2",
		"--sim-tokens-per-gb", "4096", "--sim-time-scale", "0",
		"--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "tokens_per_gb=4096") {
		t.Errorf("stderr does not log tokens per GB 4096 from /status:\n%s", r.stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Config struct {
			TokensPerGB int64  `json:"tokens_per_gb_kvcache"`
			EngineURL   string `json:"engine_url"`
		} `json:"config"`
		Results struct {
			Successful int `json:"successful_requests"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Results.Successful != 8 {
		t.Errorf("successful_requests = %d, want 8", sum.Results.Successful)
	}
	if sum.Config.TokensPerGB != 4096 || !strings.HasPrefix(sum.Config.EngineURL, "builtin (http://127.0.0.1:") {
		t.Errorf("summary config %+v, want tokens_per_gb_kvcache 4096 from the engine's /status", sum.Config)
	}
	// 0.5 GB x 4096 tokens / 500 = 4 documents, 2 questions each.
	rows := readCSV(t, filepath.Join(out, "bench_results.csv"))
	if len(rows) != 1+8 {
		t.Fatalf("%d result rows, want 8 (4 documents x 2 queries)", len(rows)-1)
	}
	// Every question hits the document its warm-up cached: all its full
	// blocks. The engine's /tokenize answers, so each document is exactly
	// 500 tokens: 31 blocks of 16.
	for i, c := range column(t, rows, "cached_tokens") {
		if n, err := strconv.Atoi(c); err != nil || n != 496 {
			t.Errorf("row %d: cached_tokens %q, want 496", i+1, c)
		}
	}
}

// TestBuiltinEngineFaultsFailRequests injects HTTP 500s into every request:
// each is counted failed with its error, and the run exits 1.
func TestBuiltinEngineFaultsFailRequests(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", "builtin", "--workload", "random-prefill",
		"--tokens-per-gb-kvcache", "1000", "--rp-num-requests", "3", "--rp-request-length", "50",
		"--sim-time-scale", "0", "--sim-fault-http-500", "1",
		"--no-interactive", "-q", "--output-dir", out)
	if r.code != exitFailed {
		t.Fatalf("exit %d, want 1\nstderr:\n%s", r.code, r.stderr)
	}
	rows := readCSV(t, filepath.Join(out, "bench_results.csv"))
	if len(rows) != 1+3 {
		t.Fatalf("%d rows, want 3", len(rows)-1)
	}
	for i, e := range column(t, rows, "error") {
		if !strings.Contains(e, "500") || !strings.Contains(e, "simulated fault") {
			t.Errorf("row %d: error %q, want the HTTP 500 and its message", i+1, e)
		}
	}
}

func TestSimHelpDocumentsTheCostModel(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	r := lmbench(t, nil, "sim", "--help")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"Tokens are whitespace-separated words",
		"time to first token = queue wait",
		"x prefill-per-token", "x cpu-load-per-token", "x disk-load-per-token", "decode-per-token",
		"--time-scale", "--gpu-gb", "--cpu-gb", "--disk-gb", "--tokens-per-gb", "--blend", "--fault-http-500",
		"loopback only",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("lmbench sim --help lacks %q", want)
		}
	}
}

func TestBuiltinEngineBadSimFlag(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	r := lmbench(t, nil, "run", "--engine-url", "builtin", "--workload", "random-prefill",
		"--sim-gpu-gb", "-1", "--sim-blend-recompute", "2", "--no-interactive", "-q", "--output-dir", t.TempDir())
	if r.code != exitUsage {
		t.Fatalf("exit %d, want 2\nstderr:\n%s", r.code, r.stderr)
	}
	for _, want := range []string{
		"--sim-gpu-gb: must be 0 (off) or a positive number of GB, got -1",
		"--sim-blend-recompute: must be between 0 and 1, got 2",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}
