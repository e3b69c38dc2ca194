package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// needleRun runs needle-qa on the built-in engine answering from its
// prompts, its answers recorded, and returns the output directory.
func needleRun(t *testing.T, extra ...string) string {
	t.Helper()
	out := t.TempDir()
	args := append([]string{"run", "--engine-url", "builtin", "--workload", "needle-qa", "--nqa-document-length", "300",
		"--sim-answers", "--record-outputs", "--sim-decode-per-token", "1ms", "--sim-prefill-per-token", "20us",
		"--no-interactive", "-q", "--json", "--output-dir", out}, extra...)
	r := lmbench(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	return out
}

// exactScore is bench_summary.json's mean exact score and its count.
func exactScore(t *testing.T, dir string) (float64, int64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Scores struct {
			All struct {
				Requests int64              `json:"requests"`
				Means    map[string]float64 `json:"means"`
			} `json:"all"`
		} `json:"scores"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Scores.All.Means["exact"], doc.Scores.All.Requests
}

// compareJSON runs lmbench compare --json and returns its answers block.
func compareAnswers(t *testing.T, a, b string) (text string, answers compareAnswersJSON) {
	t.Helper()
	r := lmbench(t, nil, "compare", a, b)
	if r.code != 0 {
		t.Fatalf("compare: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	j := lmbench(t, nil, "compare", "--json", a, b)
	var doc struct {
		Comparisons []struct {
			Answers compareAnswersJSON `json:"answers"`
		} `json:"comparisons"`
	}
	if err := json.Unmarshal([]byte(j.stdout), &doc); err != nil || len(doc.Comparisons) != 1 {
		t.Fatalf("compare --json: %v\n%s", err, j.stdout)
	}
	return r.stdout, doc.Comparisons[0].Answers
}

type compareAnswersJSON struct {
	Paired    int `json:"paired"`
	Identical int `json:"identical"`
	Diverging []struct {
		ID      string   `json:"request_id"`
		CachedB *float64 `json:"cached_share_run"`
		A       string   `json:"answer_baseline"`
		B       string   `json:"answer_run"`
	} `json:"diverging"`
}

// With the cache on and off the built-in engine answers every needle
// right, and lmbench compare finds the answers identical.
func TestNeedleCacheOnOff(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	on := needleRun(t, "--exporter", "parquet")
	off := needleRun(t, "--sim-gpu-gb", "0", "--sim-cpu-gb", "0")
	for _, dir := range []string{on, off} {
		if exact, n := exactScore(t, dir); exact != 1 || n != 12 {
			t.Errorf("%s: exact %v over %d answers, want 1 over 12", dir, exact, n)
		}
	}
	text, ans := compareAnswers(t, on, off)
	if ans.Paired != 12 || ans.Identical != 12 || len(ans.Diverging) != 0 {
		t.Errorf("answers: %+v, want 12 paired, all identical", ans)
	}
	if !strings.Contains(text, "Answers (12 paired): identical 12 (100.0%)") || strings.Contains(text, "answers differ") {
		t.Errorf("compare output:\n%s", text)
	}
}

// Blended chunks that lose their facts lower the permuted variant's
// accuracy, and compare flags the diverging answers with their cached
// share.
func TestNeedleBlendCorrupt(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	permuted := []string{"--nqa-variant", "permuted", "--nqa-documents", "6", "--sim-blend"}
	clean := needleRun(t, permuted...)
	broken := needleRun(t, append(permuted, "--sim-fault-blend-corrupt", "0.5")...)
	if exact, _ := exactScore(t, clean); exact != 1 {
		t.Errorf("blending without the fault: exact %v, want 1", exact)
	}
	if exact, n := exactScore(t, broken); exact >= 1 || n != 18 {
		t.Errorf("blended chunks corrupted: exact %v over %d answers, want below 1 over 18", exact, n)
	}
	text, ans := compareAnswers(t, clean, broken)
	if len(ans.Diverging) == 0 || ans.Identical+len(ans.Diverging) != ans.Paired {
		t.Fatalf("answers: %+v, want some diverging", ans)
	}
	for _, d := range ans.Diverging {
		if d.CachedB == nil || d.B != "I do not know." {
			t.Errorf("diverging %+v: want its cached share and the engine's lost answer", d)
		}
	}
	if !strings.Contains(text, fmt.Sprintf("! %d answers differ", len(ans.Diverging))) || !strings.Contains(text, "cached B") {
		t.Errorf("compare does not flag the diverging answers:\n%s", text)
	}
}

// changingEngine is an OpenAI-compatible server whose answer to a prompt
// changes the second time it sees that prompt (as a cache that returns a
// stale or corrupted state would). It fails a request that does not ask
// for deterministic decoding (needle-qa does: temperature 0, the run's
// seed).
func changingEngine(t *testing.T) *httptest.Server {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"fake-model","object":"model"}]}`)
			return
		}
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		if body["temperature"] != 0.0 || body["seed"] != 42.0 {
			http.Error(w, fmt.Sprintf(`{"error":{"message":"temperature %v, seed %v: want 0 and the run's 42"}}`, body["temperature"], body["seed"]), 400)
			return
		}
		p := promptOf(body)
		mu.Lock()
		seen[p]++
		n := seen[p]
		mu.Unlock()
		answer := "needle-secret-first answer"
		if n > 1 {
			answer = "needle-secret-other answer"
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i, word := range strings.Fields(answer) {
			if i > 0 {
				word = " " + word
			}
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", word)
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":2}}\n\n", len(strings.Fields(p)))
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func needleAgainst(t *testing.T, url string, extra ...string) string {
	t.Helper()
	out := t.TempDir()
	args := append([]string{"run", "--engine-url", url, "--workload", "needle-qa", "--nqa-document-length", "100",
		"--nqa-documents", "2", "--nqa-facts-per-document", "2", "--nqa-depth", "0.5", "--tokens-per-gb-kvcache", "1000",
		"--no-interactive", "-q", "--output-dir", out}, extra...)
	r := lmbench(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	return out
}

// An engine that answers an identical request differently the second
// time is flagged by lmbench compare.
func TestCompareFlagsChangedAnswer(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	srv := changingEngine(t)
	first := needleAgainst(t, srv.URL, "--record-outputs")
	second := needleAgainst(t, srv.URL, "--record-outputs")
	text, ans := compareAnswers(t, first, second)
	if ans.Paired != 4 || len(ans.Diverging) != 4 {
		t.Fatalf("answers: %+v, want 4 paired, all diverging", ans)
	}
	if d := ans.Diverging[0]; d.A != "needle-secret-first answer" || d.B != "needle-secret-other answer" {
		t.Errorf("diverging %+v", d)
	}
	if !strings.Contains(text, "! 4 answers differ") {
		t.Errorf("compare does not flag the changed answers:\n%s", text)
	}
}

// Without --record-outputs no answer text is kept anywhere: not in the
// journal, the CSV or the Parquet file; with it, the journal and the
// Parquet file have it.
func TestRecordOutputsOffKeepsNoText(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	srv := changingEngine(t)
	off := needleAgainst(t, srv.URL, "--exporter", "parquet", "--json")
	files, err := os.ReadDir(off)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name())
		b, err := os.ReadFile(filepath.Join(off, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "needle-secret") || strings.Contains(string(b), "output_text\":") {
			t.Errorf("%s keeps answer text without --record-outputs", f.Name())
		}
	}
	for _, want := range []string{"bench_journal.jsonl", "bench_results.csv", "bench_results.parquet", "bench_summary.json"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("no %s among %v", want, names)
		}
	}
	on := needleAgainst(t, srv.URL, "--exporter", "parquet", "--record-outputs")
	for _, f := range []string{"bench_journal.jsonl", "bench_results.parquet"} {
		if b, _ := os.ReadFile(filepath.Join(on, f)); !strings.Contains(string(b), "needle-secret") {
			t.Errorf("%s lacks the answers with --record-outputs", f)
		}
	}
}
