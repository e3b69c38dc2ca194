package main

// The live tier: every workload against a real engine, Ollama serving a
// small random-weight Llama model with Llama 3's real tokenizer
// (scripts/live/run.sh sets it up; make test-live). Skipped unless
// LIVE_OLLAMA_URL names the engine's URL.
//
// What a fake engine cannot show: that the prompt lengths lmbench states,
// counted by --tokenizer PATH in the model's chat template, are the
// engine's own usage.prompt_tokens, request by request; that a cached
// prefix is seen where the engine reports no cached tokens; what probe
// says of an engine that reports little.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lmbench/lmbench/core/record"
)

// liveEngine is the engine the set-up serves.
type liveEngine struct {
	url       string
	models    []string // the model every run names first, then the second name of its weights
	tokenizer string   // the model's tokenizer.json, tokenizer_config.json beside it
}

// liveOllama reads the set-up from the environment, or skips.
func liveOllama(t *testing.T) liveEngine {
	t.Helper()
	url := os.Getenv("LIVE_OLLAMA_URL")
	if url == "" {
		t.Skip("live tier: LIVE_OLLAMA_URL is not set (make test-live sets up Ollama and runs it)")
	}
	needBinaries(t)
	e := liveEngine{url: url, models: strings.Split(os.Getenv("LIVE_OLLAMA_MODELS"), ","),
		tokenizer: os.Getenv("LIVE_OLLAMA_TOKENIZER")}
	if len(e.models) != 2 || e.models[0] == "" || e.models[1] == "" {
		t.Fatalf("LIVE_OLLAMA_MODELS: want two model names separated by a comma, got %q", os.Getenv("LIVE_OLLAMA_MODELS"))
	}
	if _, err := os.Stat(e.tokenizer); err != nil {
		t.Fatalf("LIVE_OLLAMA_TOKENIZER: want the model's tokenizer.json: %v", err)
	}
	return e
}

// liveWorkloads are every workload at sizes a 2-core machine runs in
// minutes, in model tokens. The model's context is 4,096 tokens
// (OLLAMA_CONTEXT_LENGTH in scripts/live/run.sh); no prompt comes near it.
var liveWorkloads = []struct {
	name string
	args []string
	// unstated picks the requests whose length the workload does not
	// state (nil: none); a length it states must still be the engine's.
	unstated func(record.Record) bool
}{
	// 3 documents of 1,500 tokens (a warmup prompt is 1,500 and the chat
	// template's 10), one request at a time: each document's first request
	// is cold, its 2 questions then find it in one of the engine's 4 slots.
	{"long-doc-qa", []string{"--tokens-per-gb-kvcache", "4600", "--kv-cache-volume", "1",
		"--ldqa-document-length", "1500", "--ldqa-query-per-document", "2", "--ldqa-num-inflight-requests", "1"}, nil},
	// 3 sessions of 200 + 300 tokens; their answers go back as history.
	{"multi-round-chat", []string{"--tokens-per-gb-kvcache", "1600", "--kv-cache-volume", "1",
		"--mrc-shared-prompt-length", "200", "--mrc-chat-history-length", "300", "--mrc-user-input-length", "20",
		"--mrc-output-length", "24", "--mrc-qps", "2", "--mrc-duration", "8"},
		// A measured round carries the engine's earlier answers: the
		// workload counts each round's whole chat once its last answer is in.
		nil},
	{"random-prefill", []string{"--tokens-per-gb-kvcache", "1000",
		"--rp-num-requests", "8", "--rp-request-length", "400", "--rp-rate", "4"}, nil},
	{"long-doc-permutator", []string{"--tokens-per-gb-kvcache", "10000", "--kv-cache-volume", "1",
		"--ldp-num-contexts", "3", "--ldp-num-permutations", "4", "--ldp-context-length", "200",
		"--ldp-system-prompt-length", "50", "--ldp-num-inflight-requests", "2"}, nil},
	{"prefix-suffix-tuner", []string{"--tokens-per-gb-kvcache", "600", "--kv-cache-volume", "1",
		"--psf-context-length", "400", "--psf-prefix-ratio", "0.3", "--psf-thrash", "1"}, nil},
	// The first 12 requests of a Mooncake trace (prompts of up to 2,000
	// tokens), ten times as fast.
	{"trace-replay", []string{"--tokens-per-gb-kvcache", "10000", "--kv-cache-volume", "1",
		"--tr-trace", filepath.Join("testdata", "mooncake_200.jsonl"), "--tr-max-requests", "12", "--tr-speedup", "10"}, nil},
	{"kv-tier-pressure", []string{"--tokens-per-gb-kvcache", "1000", "--kv-cache-volume", "1",
		"--ktp-pool-size", "6", "--ktp-docs-per-request", "1", "--ktp-context-length", "240",
		"--ktp-system-prompt-length", "32", "--ktp-num-requests", "12", "--ktp-num-inflight-requests", "2",
		"--ktp-max-output-length", "1"}, nil},
}

// TestLiveTierWorkloads runs every workload with --tokenizer PATH and wants,
// for every request, warmup included, the prompt length lmbench stated
// to be the engine's usage.prompt_tokens, in the journal and in the CSV.
// For long-doc-qa, the questions (their document cached) must be faster
// than the documents' first requests, and the ledger must say the reuse
// was inferred: Ollama reports no cached tokens.
func TestLiveTierWorkloads(t *testing.T) {
	e := liveOllama(t)
	// One at a time: the engine is one, and long-doc-qa compares TTFTs.
	for _, w := range liveWorkloads {
		t.Run(w.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"run", "--engine-url", e.url, "--model", e.models[0], "--workload", w.name,
				"--tokenizer", e.tokenizer, "--exporter", "csv", "--csv-include-warmup",
				"--no-interactive", "-q", "--json", "--output-dir", out}, w.args...)
			start := time.Now()
			r := lmbench(t, nil, args...)
			t.Logf("%s: exit %d in %.1fs", w.name, r.code, time.Since(start).Seconds())
			if r.code != exitOK {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, trunc(r.stdout), r.stderr)
			}
			recs := readJournal(t, filepath.Join(out, "bench_journal.jsonl")).Records
			checkStatedIsEngines(t, recs, w.unstated)
			checkCSVStatedIsEngines(t, filepath.Join(out, "bench_results.csv"), recs)
			if w.name == "long-doc-qa" {
				checkWarmFasterThanCold(t, recs)
				checkLedgerInfersReuse(t, out)
			}
		})
	}
}

// checkStatedIsEngines wants every request answered, its stated prompt
// length given (unless unstated picks it) and equal to the engine's
// usage.prompt_tokens.
func checkStatedIsEngines(t *testing.T, recs []record.Record, unstated func(record.Record) bool) {
	t.Helper()
	if len(recs) == 0 {
		t.Fatal("no requests in the journal")
	}
	bad, stated := 0, 0
	for _, rec := range recs {
		if rec.Success && rec.StatedPromptTokens == 0 && unstated != nil && unstated(rec) {
			continue
		}
		stated++
		if !rec.Success || rec.StatedPromptTokens <= 0 || rec.StatedPromptTokens != rec.InputTokens {
			bad++
			if bad <= 10 {
				t.Errorf("%s (%s): success %v (%s), stated %d prompt tokens, the engine's usage.prompt_tokens %d",
					rec.RequestID, rec.Phase, rec.Success, rec.Error, rec.StatedPromptTokens, rec.InputTokens)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d requests: stated prompt tokens are not the engine's", bad, stated)
	}
	if stated == 0 {
		t.Errorf("none of %d requests stated its prompt length", len(recs))
	}
}

// checkCSVStatedIsEngines wants the CSV to say what the journal says,
// row by row: a stated length equal to the engine's, or none.
func checkCSVStatedIsEngines(t *testing.T, path string, recs []record.Record) {
	t.Helper()
	rows := readCSV(t, path)
	ids, stated, input := column(t, rows, "request_id"), column(t, rows, "stated_prompt_tokens"), column(t, rows, "num_input_tokens")
	if len(ids) != len(recs) {
		t.Errorf("%s: %d rows, the journal %d requests", path, len(ids), len(recs))
	}
	byID := map[string]record.Record{}
	for _, r := range recs {
		byID[r.RequestID] = r
	}
	for i, id := range ids {
		want := ""
		if r := byID[id]; r.StatedPromptTokens > 0 {
			want = strconv.FormatInt(r.StatedPromptTokens, 10)
		}
		if stated[i] != want || want != "" && stated[i] != input[i] {
			t.Errorf("%s: %s: stated_prompt_tokens %q (the journal %q), num_input_tokens %q", path, id, stated[i], want, input[i])
		}
	}
}

// checkWarmFasterThanCold compares long-doc-qa's questions, each after
// its document was sent once, with the documents' first requests (the
// warmup), one request at a time in both: the median question must be
// faster. Prompts of 1,500 tokens, so prefill dominates TTFT.
func checkWarmFasterThanCold(t *testing.T, recs []record.Record) {
	t.Helper()
	var cold, warm []float64
	for _, rec := range recs {
		if !rec.Success {
			continue
		}
		if rec.Phase == record.Warmup {
			cold = append(cold, rec.TTFT)
		} else {
			warm = append(warm, rec.TTFT)
		}
	}
	if len(cold) < 3 || len(warm) < 3 {
		t.Fatalf("%d cold and %d warm requests: want at least 3 of each", len(cold), len(warm))
	}
	mc, mw := median(cold), median(warm)
	t.Logf("long-doc-qa: median TTFT cold %.0f ms (%d requests), warm %.0f ms (%d requests)", mc*1e3, len(cold), mw*1e3, len(warm))
	if mw >= mc {
		t.Errorf("median TTFT of the questions %.0f ms, of the documents' first requests %.0f ms: want the questions faster (their document cached)",
			mw*1e3, mc*1e3)
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// checkLedgerInfersReuse wants the summary's cache ledger to say the
// engine reports no cached tokens and to infer reuse from TTFT: warm
// requests compared with cold ones, labelled inferred, the warm faster by
// the ledger's own measure (a ratio below 0.9, the ledger's threshold).
func checkLedgerInfersReuse(t *testing.T, out string) {
	t.Helper()
	var s struct {
		Ledger *struct {
			Reported *bool `json:"cached_tokens_reported"`
			Gain     *struct {
				Inferred bool    `json:"inferred"`
				Warm     int     `json:"hit_requests"`
				Cold     int     `json:"cold_requests"`
				Ratio    float64 `json:"ratio"`
			} `json:"ttft_gain"`
			Verdicts []string `json:"verdicts"`
		} `json:"cache_ledger"`
	}
	b, err := os.ReadFile(filepath.Join(out, "bench_summary.json"))
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	if err != nil {
		t.Fatalf("bench_summary.json: %v", err)
	}
	l := s.Ledger
	if l == nil {
		t.Fatal("bench_summary.json has no cache_ledger")
	}
	if l.Reported == nil || *l.Reported {
		t.Errorf("cache_ledger.cached_tokens_reported %v: want false (Ollama reports no cached tokens)", l.Reported)
	}
	if g := l.Gain; g == nil || !g.Inferred || !(g.Ratio < 0.9) {
		t.Errorf("cache_ledger.ttft_gain %+v: want reuse inferred from TTFT, warm/cold ratio below 0.9\nverdicts: %q", g, l.Verdicts)
	}
}

// TestLiveTierAnswersAreWords: the model answers a chat with whole words up
// to max_tokens, as its output layer was shaped to (scripts/live/mkmodel):
// no end of sequence, no byte fragments, no token repeated (Ollama stops
// a stream after 30 repeats).
func TestLiveTierAnswersAreWords(t *testing.T) {
	e := liveOllama(t)
	body, _ := json.Marshal(map[string]any{"model": e.models[0], "max_tokens": 128, "temperature": 0,
		"messages": []map[string]string{{"role": "user", "content": "Say something."}}})
	resp, err := http.Post(e.url+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Choices []struct {
			Message      struct{ Content string }
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK || len(got.Choices) != 1 {
		t.Fatalf("status %d, %d choices, %v", resp.StatusCode, len(got.Choices), err)
	}
	text := got.Choices[0].Message.Content
	words := strings.Fields(text)
	if got.Usage.CompletionTokens != 128 || len(words) != 128 || got.Choices[0].FinishReason != "length" {
		t.Errorf("%d tokens, %d words, finish %q: want 128 of each, cut by length\n%q",
			got.Usage.CompletionTokens, len(words), got.Choices[0].FinishReason, text)
	}
	if !regexp.MustCompile(`^[a-z]+( [a-z]+)*$`).MatchString(text) {
		t.Errorf("answer is not lower-case words separated by single spaces:\n%q", text)
	}
}

// TestLiveTierProbe: lmbench probe names Ollama and says, each in its own
// words, what it does not report: cached token counts, a tokenizer
// endpoint, Prometheus metrics, a cache reset.
func TestLiveTierProbe(t *testing.T) {
	e := liveOllama(t)
	r := lmbench(t, nil, "probe", "--engine-url", e.url)
	if r.code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	out := strings.ToLower(r.stdout)
	if !strings.Contains(out, "ollama") {
		t.Errorf("probe does not name the engine Ollama:\n%s", r.stdout)
	}
	for _, what := range []string{"cached token", "tokenizer", "metrics", "reset"} {
		re := regexp.MustCompile(`(?m)^.*\bno\b.*` + regexp.QuoteMeta(what) + `.*$`)
		if !re.MatchString(out) {
			t.Errorf("probe does not say Ollama reports no %s (a line with \"no\" and %q):\n%s", what, what, r.stdout)
		}
	}
	for _, m := range e.models {
		if !strings.Contains(r.stdout, m) {
			t.Errorf("probe does not list the served model %s:\n%s", m, r.stdout)
		}
	}
}

// TestLiveTierTwoModelsNeedModel: Ollama serves two models; a run without
// --model is an error naming both, and exits before measuring anything.
func TestLiveTierTwoModelsNeedModel(t *testing.T) {
	e := liveOllama(t)
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", e.url, "--workload", "random-prefill", "--tokenizer", e.tokenizer,
		"--tokens-per-gb-kvcache", "1000", "--rp-num-requests", "2", "--rp-request-length", "50",
		"--no-interactive", "-q", "--output-dir", out)
	if r.code == exitOK {
		t.Fatalf("exit 0 with two served models and no --model\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	for _, m := range e.models {
		if !strings.Contains(r.stderr, m) {
			t.Errorf("the error does not name the served model %s:\n%s", m, r.stderr)
		}
	}
	if !strings.Contains(r.stderr, "--model") {
		t.Errorf("the error does not point at --model:\n%s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "bench_journal.jsonl")); err == nil {
		t.Errorf("a journal was written: the run should stop before any request")
	}
}
