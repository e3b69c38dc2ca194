package main

// End-to-end tests of token-exact lengths: the real binaries against
// `lmbench sim --tokenizer-mode subword`, a separate process whose
// /tokenize is the referee.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// recorder forwards to an engine and keeps the chat requests' bodies.
type recorder struct {
	mu     sync.Mutex
	bodies []map[string]any
	srv    *httptest.Server
}

func newRecorder(t *testing.T, target string) *recorder {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1
	rec := &recorder{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			b, _ := io.ReadAll(r.Body)
			var body map[string]any
			if json.Unmarshal(b, &body) == nil {
				rec.mu.Lock()
				rec.bodies = append(rec.bodies, body)
				rec.mu.Unlock()
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

// warmupDocs returns the documents of the warmup requests (max_tokens 1).
func (r *recorder) warmupDocs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var docs []string
	for _, b := range r.bodies {
		if b["max_tokens"].(float64) == 1 {
			docs = append(docs, promptOf(b))
		}
	}
	return docs
}

// simCount asks the sim's /tokenize for the tokens of body.
func simCount(t *testing.T, base string, body map[string]any) int {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(base+"/tokenize", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct{ Count int }
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != 200 {
		t.Fatalf("/tokenize: status %d, %v", resp.StatusCode, err)
	}
	return r.Count
}

// TestLongDocQATokenExact: against a tokenizer whose words cost several
// tokens, every document is exactly --ldqa-document-length tokens by the
// engine's own /tokenize, and the document count follows from the tokens
// a warmup prompt costs (document + chat template), not from words.
func TestLongDocQATokenExact(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	_, sim := startSim(t, "--tokenizer-mode", "subword", "--time-scale", "0")
	rec := newRecorder(t, sim)
	out := t.TempDir()
	// 1 GB x 8000 tokens: 4 documents of 2,000 words, but only 3 of 2,000
	// tokens once the chat template's 5 are counted.
	r := lmbench(t, nil, "run", "--engine-url", rec.srv.URL, "--workload", "long-doc-qa",
		"--tokens-per-gb-kvcache", "8000", "--kv-cache-volume", "1",
		"--ldqa-document-length", "2000", "--ldqa-query-per-document", "1",
		"--no-interactive", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	docs := rec.warmupDocs()
	if len(docs) != 3 {
		t.Fatalf("%d warmup documents, want 3 (8000 tokens / 2005 per warmup prompt)", len(docs))
	}
	for i, d := range docs {
		if n := simCount(t, sim, map[string]any{"prompt": d, "add_special_tokens": false}); n != 2000 {
			t.Errorf("document %d: %d tokens by the engine's /tokenize, want exactly 2000", i, n)
		}
		if !strings.HasPrefix(d, "Document ") {
			t.Errorf("document %d starts %q, want its distinct header", i, trunc(d))
		}
	}
	warm := simCount(t, sim, map[string]any{"messages": []map[string]string{{"role": "user", "content": docs[0]}}})
	if warm != 2005 {
		t.Errorf("a warmup prompt costs %d tokens, want 2005 (2000 + the chat template's 5)", warm)
	}
	for _, want := range []string{"Documents", "Warmup prompt", "2005 tokens (document + 5 of chat template)", "Question scaffolding"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("banner lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stderr, "whitespace words") {
		t.Errorf("warned about words with a working /tokenize:\n%s", r.stderr)
	}
	// The summary sets the stated prompt lengths beside the engine's
	// usage.prompt_tokens: they agree for every request.
	p := promptTokens(t, out)
	if p.Tokenizer != "engine" {
		t.Errorf("summary tokenizer %q, want engine", p.Tokenizer)
	}
	for name, ph := range map[string]promptPhase{"warmup": p.Warmup, "measure": p.Measure} {
		if ph.Requests != 3 || ph.Stated == nil || ph.Measured == nil || *ph.Stated != *ph.Measured || *ph.Differing != 0 {
			t.Errorf("%s: %+v, want 3 requests whose stated and measured prompt tokens agree", name, ph)
		}
	}
	if *p.Warmup.Stated != 3*2005 {
		t.Errorf("warmup stated %d prompt tokens, want 3 x 2005", *p.Warmup.Stated)
	}
}

type promptPhase struct {
	Requests                    int
	Stated, Measured, Differing *int
}

// promptTokens reads bench_summary.json's prompt_tokens block.
func promptTokens(t *testing.T, dir string) struct {
	Tokenizer       string
	Warmup, Measure promptPhase
} {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		P *struct {
			Tokenizer       string
			Warmup, Measure promptPhase
		} `json:"prompt_tokens"`
	}
	if err := json.Unmarshal(b, &s); err != nil || s.P == nil {
		t.Fatalf("bench_summary.json: no prompt_tokens block (%v):\n%s", err, b)
	}
	return *s.P
}

// TestLongDocQAWithoutTokenizeWarnsAndUsesWords: an engine without
// /tokenize gets the original's word-sized documents and a warning.
func TestLongDocQAWithoutTokenizeWarnsAndUsesWords(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	for name, args := range map[string][]string{
		"no /tokenize":      {"--sim-no-tokenize"},
		"--tokenizer words": {"--tokenizer", "words", "--sim-tokenizer-mode", "subword"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			r := lmbench(t, nil, append([]string{"run", "--engine-url", "builtin", "--workload", "long-doc-qa",
				"--tokens-per-gb-kvcache", "8000", "--kv-cache-volume", "1", "--sim-time-scale", "0",
				"--ldqa-document-length", "2000", "--ldqa-query-per-document", "1",
				"--no-interactive", "-q", "--json", "--output-dir", out}, args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, "prompt lengths are in whitespace words, not the model's tokens") {
				t.Errorf("no warning that lengths are in words:\n%s", r.stderr)
			}
			// 8000 / 2000 words = 4 documents, 4 measured requests.
			rows := readCSV(t, filepath.Join(out, "bench_results.csv"))
			if len(rows) != 1+4 {
				t.Errorf("%d measured rows, want 4 (documents sized in words)", len(rows)-1)
			}
			if p := promptTokens(t, out); p.Tokenizer != "words" || p.Measure.Requests != 0 || p.Measure.Stated != nil {
				t.Errorf("summary prompt_tokens %+v, want words and nothing stated (null)", p)
			}
		})
	}
}

// TestTokenizerEngineFailsWithoutTokenize: --tokenizer engine insists.
func TestTokenizerEngineFailsWithoutTokenize(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	r := lmbench(t, nil, "run", "--engine-url", "builtin", "--workload", "long-doc-qa", "--sim-no-tokenize",
		"--tokens-per-gb-kvcache", "8000", "--kv-cache-volume", "1", "--tokenizer", "engine",
		"--no-interactive", "-q", "--output-dir", t.TempDir())
	if r.code == 0 || !strings.Contains(r.stderr, "--tokenizer engine: the engine's /tokenize does not answer: text 0: engine /tokenize: HTTP 404") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	r = lmbench(t, nil, "run", "--engine-url", "builtin", "--workload", "long-doc-qa",
		"--tokens-per-gb-kvcache", "8000", "--tokenizer", "/nonexistent/tokenizer.json",
		"--no-interactive", "-q", "--output-dir", t.TempDir())
	if r.code == 0 || !strings.Contains(r.stderr, `--tokenizer /nonexistent/tokenizer.json: expected a Hugging Face tokenizer.json or a directory holding one`) {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// TestMultiRoundChatTokenExact: the session count follows from the tokens
// of a warmup prompt by the engine's /tokenize, and each system prompt and
// history is exactly its length.
func TestMultiRoundChatTokenExact(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	_, sim := startSim(t, "--tokenizer-mode", "subword", "--time-scale", "0")
	rec := newRecorder(t, sim)
	out := t.TempDir()
	// 9,000 tokens of KV cache: 6 sessions of 300 + 1,200 words, 5 once
	// the template and the fixed turns are counted.
	r := lmbench(t, nil, "run", "--engine-url", rec.srv.URL, "--workload", "multi-round-chat",
		"--tokens-per-gb-kvcache", "9000", "--kv-cache-volume", "1",
		"--mrc-shared-prompt-length", "300", "--mrc-chat-history-length", "1200", "--mrc-user-input-length", "20",
		"--mrc-output-length", "2", "--mrc-qps", "50", "--mrc-duration", "0.2",
		"--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if p := promptTokens(t, out).Warmup; p.Requests != 5 || p.Stated == nil || *p.Stated != *p.Measured {
		t.Errorf("warmup prompt tokens %+v, want 5 requests stated as the engine counted them", p)
	}
	rec.mu.Lock()
	var warm []map[string]any
	for _, b := range rec.bodies {
		if b["max_tokens"].(float64) == 1 {
			warm = append(warm, b)
		}
	}
	rec.mu.Unlock()
	if len(warm) != 5 {
		t.Fatalf("%d sessions warmed, want 5", len(warm))
	}
	for i, b := range warm {
		msgs := b["messages"].([]any)
		for j, want := range map[int]int{0: 300, 1: 1200} {
			text := msgs[j].(map[string]any)["content"].(string)
			if n := simCount(t, sim, map[string]any{"prompt": text, "add_special_tokens": false}); n != want {
				t.Errorf("session %d message %d: %d tokens by /tokenize, want %d", i, j, n, want)
			}
		}
	}
	n := simCount(t, sim, map[string]any{"messages": warm[0]["messages"]})
	if 9000/n != 5 {
		t.Errorf("a warmup prompt costs %d tokens: 9000 / it is not the 5 sessions run", n)
	}
}

// TestRandomPrefillTokenExact: every prompt is what the workload stated,
// by the engine's own count of the request.
func TestRandomPrefillTokenExact(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", "builtin", "--sim-tokenizer-mode", "subword", "--sim-time-scale", "0",
		"--workload", "random-prefill", "--tokens-per-gb-kvcache", "8192",
		"--rp-num-requests", "12", "--rp-request-length", "300",
		"--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	p := promptTokens(t, out).Measure
	if p.Requests != 12 || p.Stated == nil || *p.Stated != *p.Measured || *p.Differing != 0 {
		t.Errorf("measured prompt tokens %+v, want 12 requests, each as stated", p)
	}
	// 300 tokens of text in the chat template: 3 + 2 more each.
	if p.Stated != nil && *p.Stated != 12*305 {
		t.Errorf("stated %d prompt tokens, want 12 x 305", *p.Stated)
	}
}

// TestPrefixSuffixTunerTokenExact: both passes' prompts are what the
// workload stated, by the engine's count.
func TestPrefixSuffixTunerTokenExact(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", "builtin", "--sim-tokenizer-mode", "subword", "--sim-time-scale", "0",
		"--workload", "prefix-suffix-tuner", "--tokens-per-gb-kvcache", "8192",
		"--psf-context-length", "1000", "--psf-prefix-ratio", "0.5", "--psf-thrash", "0.5",
		"--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	p := promptTokens(t, out)
	for name, ph := range map[string]promptPhase{"warmup": p.Warmup, "measure": p.Measure} {
		// 0.5 GB x 8192 x 1.05 / (500 + 5 of chat template) = 8 prefixes.
		if ph.Requests != 8 || ph.Stated == nil || *ph.Stated != *ph.Measured || *ph.Differing != 0 {
			t.Errorf("%s: %+v, want 8 requests, each as stated", name, ph)
		}
	}
}

// TestPermutatorTokenExact: every permutation's prompt is what the
// workload stated, by the engine's count.
func TestPermutatorTokenExact(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", "builtin", "--sim-tokenizer-mode", "subword", "--sim-time-scale", "0",
		"--workload", "long-doc-permutator", "--tokens-per-gb-kvcache", "8192",
		"--ldp-num-contexts", "3", "--ldp-context-length", "400", "--ldp-system-prompt-length", "50",
		"--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	p := promptTokens(t, out).Measure
	if p.Requests != 6 || p.Stated == nil || *p.Stated != *p.Measured || *p.Differing != 0 {
		t.Errorf("measured prompt tokens %+v, want 6 requests, each as stated", p)
	}
}
