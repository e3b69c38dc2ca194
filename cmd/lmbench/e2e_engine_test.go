package main

// End-to-end tests of engines that are not vLLM (issue 22), through the
// real binaries: the built-in engine posing as Ollama (--sim-kind ollama:
// no cached tokens, no /tokenize, no /metrics, no reset) and serving
// several models (--sim-extra-models).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEngineProbe(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	t.Run("ollama", func(t *testing.T) {
		t.Parallel()
		_, base := startSim(t, "--kind", "ollama", "--extra-models", "llama3.2:1b")
		url := strings.TrimSuffix(base, "/v1")
		r := lmbench(t, nil, "probe", "--engine-url", url)
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		for _, want := range []string{
			"Engine at " + url + ": Ollama 0.0.0-lmbench-sim (ollama, from GET /api/version)",
			"cannot: no cached token counts: the cache ledger will use TTFT only",
			"cannot: no tokenizer endpoint",
			"cannot: no cache reset",
			"serves 2 models (lmbench-sim, llama3.2:1b): a run needs --model to choose one",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("probe output lacks %q:\n%s", want, r.stdout)
			}
		}
	})
	t.Run("builtin as itself, JSON", func(t *testing.T) {
		t.Parallel()
		_, url := startSim(t)
		r := lmbench(t, nil, "probe", "--engine-url", url, "--json")
		var got struct {
			Kind         string `json:"kind"`
			Tokenize     bool   `json:"tokenize"`
			Metrics      bool   `json:"metrics"`
			CachedTokens string `json:"cached_tokens"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 0 {
			t.Fatalf("exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
		}
		if got.Kind != "builtin" || !got.Tokenize || !got.Metrics || got.CachedTokens == "" {
			t.Errorf("probe of the built-in engine: %+v", got)
		}
	})
	t.Run("bad address", func(t *testing.T) {
		t.Parallel()
		r := lmbench(t, nil, "probe", "--engine-url", "ftp://x")
		if r.code != exitUsage || !strings.Contains(r.stderr, `--engine-url: "ftp://x" has the scheme "ftp"`) {
			t.Errorf("exit %d, stderr %s", r.code, r.stderr)
		}
	})
}

// Two served models and no --model: an error naming them, before any
// request is sent; --model picks one.
func TestEngineSeveralModelsNeedModel(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	args := []string{"run", "--engine-url", "builtin", "--workload", "random-prefill", "--sim-extra-models", "other-model",
		"--sim-time-scale", "0", "--tokens-per-gb-kvcache", "8192", "--kv-cache-volume", "0.01", "--no-interactive", "-q"}
	out := t.TempDir()
	r := lmbench(t, nil, append(args, "--output-dir", out)...)
	want := "the engine serves 2 models (lmbench-sim, other-model); pass --model with one of them"
	if r.code != exitUsage || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d, want %d and %q:\n%s", r.code, exitUsage, want, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "bench_journal.jsonl")); err == nil {
		t.Error("a journal was written: requests went out before the error")
	}
	r = lmbench(t, nil, append(args, "--output-dir", t.TempDir(), "--model", "other-model")...)
	if r.code != 0 {
		t.Errorf("with --model other-model: exit %d\n%s", r.code, r.stderr)
	}
}

// An engine that reports no cached tokens: the summary's cached figures
// are n/a (null), the ledger says so once and infers reuse from TTFT,
// labelled inferred, and the engine block says what it cannot measure.
func TestEngineWithoutCachedTokensInfersReuse(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", "builtin", "--sim-kind", "ollama", "--workload", "long-doc-qa",
		"--sim-time-scale", "0.2", "--kv-cache-volume", "1", "--ldqa-document-length", "2000", "--ldqa-query-per-document", "3",
		"--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"Measured cached tokens (requests):                   n/a",
		"Measured cached tokens:", "Reuse (inferred from TTFT):"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "lengths in words, not tokens") {
		t.Errorf("the contradictory warning is back:\n%s", r.stdout)
	}
	b, err := os.ReadFile(filepath.Join(out, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cache struct {
			Measure struct {
				Cached *int64 `json:"cached_tokens"`
			} `json:"measure"`
		} `json:"cache"`
		Ledger struct {
			Measure struct {
				Journal *int64 `json:"journal_cached_tokens"`
			} `json:"measure"`
			Gain *struct {
				Inferred bool    `json:"inferred"`
				Ratio    float64 `json:"ratio"`
			} `json:"ttft_gain"`
			Verdicts []string `json:"verdicts"`
		} `json:"cache_ledger"`
		Engine struct {
			Kind   string   `json:"kind"`
			Cannot []string `json:"cannot"`
		} `json:"engine"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Cache.Measure.Cached != nil || doc.Ledger.Measure.Journal != nil {
		t.Errorf("cached tokens written as numbers (%v, %v), want null", doc.Cache.Measure.Cached, doc.Ledger.Measure.Journal)
	}
	if g := doc.Ledger.Gain; g == nil || !g.Inferred || g.Ratio >= 0.9 {
		t.Errorf("ttft_gain %+v, want inferred with warm requests faster than cold", g)
	}
	if n := len(doc.Ledger.Verdicts); n != 1 || !strings.Contains(doc.Ledger.Verdicts[0], "Ollama does not report cached tokens") ||
		!strings.HasSuffix(doc.Ledger.Verdicts[0], "the cache served them (inferred)") {
		t.Errorf("verdicts %q, want one saying Ollama reports none and reuse was inferred", doc.Ledger.Verdicts)
	}
	if doc.Engine.Kind != "ollama" || verdictWith(doc.Engine.Cannot, "no cached token counts") == "" {
		t.Errorf("engine block %+v", doc.Engine)
	}
}

// --reset-cache on an engine without a reset is refused before traffic.
func TestEngineWithoutResetRefusesResetCache(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	r := lmbench(t, nil, "run", "--engine-url", "builtin", "--sim-kind", "ollama", "--workload", "random-prefill",
		"--sim-time-scale", "0", "--tokens-per-gb-kvcache", "8192", "--kv-cache-volume", "0.01", "--reset-cache", "before-warmup",
		"--no-interactive", "-q", "--output-dir", t.TempDir())
	want := "--reset-cache before-warmup: Ollama has no prefix-cache reset; restart the engine for a cold start"
	if r.code != exitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, want %d and %q:\n%s", r.code, exitUsage, want, r.stderr)
	}
}

// Under --ignore-eos on an engine that ignores it, every answer shorter
// than max_tokens is flagged in the log and counted in the summary.
func TestEngineIgnoringIgnoreEOSIsFlagged(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", "builtin", "--sim-kind", "ollama", "--sim-eos-after", "2",
		"--workload", "long-doc-qa", "--ldqa-document-length", "100", "--ldqa-query-per-document", "2", "--ignore-eos",
		"--sim-time-scale", "0", "--kv-cache-volume", "0.01", "--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "output tokens of the") || !strings.Contains(r.stderr, "under ignore_eos: the engine ignored it") {
		t.Errorf("no request flagged in the log:\n%s", r.stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Results struct {
			Total int `json:"total_requests"`
		} `json:"results"`
		Checks *struct {
			Short int `json:"short_under_ignore_eos"`
		} `json:"stream_checks"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Checks == nil || doc.Checks.Short < doc.Results.Total || doc.Results.Total == 0 {
		t.Errorf("stream_checks %+v over %d requests, want every request short", doc.Checks, doc.Results.Total)
	}
	if !strings.Contains(r.stdout, "Short under ignore_eos:") || !strings.Contains(r.stdout, "WARNING: ") {
		t.Errorf("the summary does not say so:\n%s", r.stdout)
	}
}

// trace-replay takes the host's tokenizer: with an engine that counts
// subwords, every prompt is the trace's input_length in its tokens, as
// the engine's own usage.prompt_tokens says.
func TestEngineTraceReplaySizesInTokens(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	text := `{"timestamp": 0, "input_length": 300, "output_length": 2, "hash_ids": [1, 2, 3, 4, 5]}
{"timestamp": 5, "input_length": 250, "output_length": 2, "hash_ids": [1, 2, 3, 6]}
{"timestamp": 9, "input_length": 120, "output_length": 2, "hash_ids": [7, 8]}
`
	if err := os.WriteFile(trace, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", "builtin", "--sim-tokenizer-mode", "subword", "--tokenizer", "engine",
		"--workload", "trace-replay", "--tr-trace", trace, "--tr-block-size", "64", "--sim-time-scale", "0",
		"--tokens-per-gb-kvcache", "8192", "--no-interactive", "-q", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "does not take a tokenizer") {
		t.Errorf("trace-replay refused the tokenizer:\n%s", r.stderr)
	}
	want := map[string]int64{"line1": 300, "line2": 250, "line3": 120}
	c := readJournal(t, filepath.Join(out, "bench_journal.jsonl"))
	for _, rec := range c.Records {
		if rec.InputTokens != want[rec.RequestID] || rec.StatedPromptTokens != rec.InputTokens {
			t.Errorf("%s: engine counted %d, stated %d; want both %d", rec.RequestID, rec.InputTokens, rec.StatedPromptTokens, want[rec.RequestID])
		}
	}
}
