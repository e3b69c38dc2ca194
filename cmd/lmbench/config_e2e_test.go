package main

// End-to-end tests of configuration: files, environment, flags, export,
// required arguments and the error messages, through the real binary.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// specExample is the exported file of the original's documentation
// (spec §6.5), verbatim.
const specExample = "testdata/bench_config.json"

func writeTemp(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readJSONFile(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return m
}

// The original's exported file runs unchanged; its model goes to the engine.
func TestSpecExampleConfigRuns(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t, withModels("fake-model", "Qwen/Qwen3-14B"))
	out := t.TempDir()
	cfg, _ := filepath.Abs(specExample)
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--config", cfg, "--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := eng.requests()
	// 100 GB × 6553 tokens/GB / 10000 tokens = 65 documents: 65 warmups + 130 questions.
	if len(reqs) != 65+130 {
		t.Errorf("engine saw %d requests, want 195", len(reqs))
	}
	for _, b := range reqs {
		if b["model"] != "Qwen/Qwen3-14B" {
			t.Fatalf("model %v, want the file's Qwen/Qwen3-14B", b["model"])
		}
	}
	var summary struct {
		Config map[string]any `json:"config"`
	}
	b, _ := os.ReadFile(filepath.Join(out, "bench_summary.json"))
	if err := json.Unmarshal(b, &summary); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"model": "Qwen/Qwen3-14B", "workload": "long-doc-qa", "kv_cache_volume_gb": 100.0, "tokens_per_gb_kvcache": 6553.0}
	for k, v := range want {
		if summary.Config[k] != v {
			t.Errorf("summary config %s = %v, want %v", k, summary.Config[k], v)
		}
	}
	// ldqa_document_length 10000: "Document 0:" and 9990 "hi" (spec §2.1).
	if n := len(strings.Fields(promptOf(reqs[0]))); n != 9992 {
		t.Errorf("first document has %d words, want 9992", n)
	}
}

// A file written by a later version of the original (served_model_name,
// ignore_eos, ldqa_max_output_length) loads too.
func TestLaterOriginalConfigLoads(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t, withModels("fake-model", "qwen"))
	cfg := writeTemp(t, "later.json", `{
  "model": "Qwen/Qwen3-14B",
  "served_model_name": "qwen",
  "workload": "long-doc-qa",
  "kv_cache_volume": 1.0,
  "tokens_per_gb_kvcache": 2000,
  "ignore_eos": false,
  "ldqa_document_length": 500,
  "ldqa_query_per_document": 1,
  "ldqa_shuffle_policy": "tile",
  "ldqa_num_inflight_requests": 2,
  "ldqa_max_output_length": 128
}`)
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--config", cfg, "--no-interactive", "-q", "--no-csv", "--output-dir", t.TempDir())
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := eng.requests()
	if len(reqs) != 8 || reqs[0]["model"] != "qwen" {
		t.Errorf("%d requests (want 4 documents + 4 questions), model %v", len(reqs), reqs[0]["model"])
	}
}

// --export-config writes the resolved configuration (auto-detected model,
// no engine URL); running from it resolves to the same configuration, in
// any of the file formats.
func TestExportConfigRoundTrip(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	dir := t.TempDir()
	a := filepath.Join(dir, "a.json")
	r := lmbench(t, []string{"OPENAI_API_KEY=sk-export-secret"}, "run", "--engine-url", eng.srv.URL, "--workload", "long-doc-qa",
		"--tokens-per-gb-kvcache", "8192", "--kv-cache-volume", "2", "--ldqa-document-length", "3000",
		"--ldqa-shuffle-policy", "tile", "--seed", "7", "--export-config", a)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if len(eng.requests()) != 0 {
		t.Errorf("--export-config sent %d benchmark requests", len(eng.requests()))
	}
	if !strings.Contains(r.stdout, "Configuration exported to "+a) || !strings.Contains(r.stdout, "--config "+a) {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	exported, _ := os.ReadFile(a)
	for _, secret := range []string{eng.srv.URL, "engine_url", "lmcache_url", "sk-export-secret"} {
		if strings.Contains(string(exported), secret) {
			t.Errorf("exported file contains %q:\n%s", secret, exported)
		}
	}
	got := readJSONFile(t, a)
	want := map[string]any{"model": "fake-model", "workload": "long-doc-qa", "kv_cache_volume": 2.0, "tokens_per_gb_kvcache": 8192.0,
		"ldqa_document_length": 3000.0, "ldqa_shuffle_policy": "tile", "ldqa_query_per_document": 2.0, "seed": 7.0}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("exported %s = %v, want %v", k, got[k], v)
		}
	}
	if !strings.HasPrefix(string(exported), "{\n  \"model\": \"fake-model\",\n  \"workload\": \"long-doc-qa\",\n  \"kv_cache_volume\": 2.0,") {
		t.Errorf("exported file does not keep the original's key order and float style:\n%s", exported)
	}
	// JSON → YAML → TOML → JSON gives back the same file.
	prev := a
	for _, name := range []string{"b.yaml", "c.toml", "d.json"} {
		next := filepath.Join(dir, name)
		r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--config", prev, "--export-config", next)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", name, r.code, r.stderr)
		}
		prev = next
	}
	final, _ := os.ReadFile(prev)
	if string(final) != string(exported) {
		t.Errorf("after the round trip:\n%s\nwant:\n%s", final, exported)
	}
	// A run from the exported file records exactly that configuration.
	out := t.TempDir()
	r = lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--config", a, "-q", "--no-csv", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("run from %s: exit %d\n%s", a, r.code, r.stderr)
	}
	var ran map[string]any
	if err := json.Unmarshal(readJournal(t, filepath.Join(out, "bench_journal.jsonl")).Run.Config, &ran); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ran) != fmt.Sprint(got) {
		t.Errorf("the run resolved %v, the export says %v", ran, got)
	}
}

// Each layer beats the one below: flags > env > file > plugin defaults.
func TestLayersOverrideInOrder(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	cfg := writeTemp(t, "run.yaml", "workload: long-doc-qa\ntokens_per_gb_kvcache: 1000\nseed: 1\nldqa_document_length: 111\nldqa_query_per_document: 5\nkv_cache_volume: 3\n")
	export := func(env []string, extra ...string) map[string]any {
		t.Helper()
		p := filepath.Join(t.TempDir(), "out.json")
		args := append([]string{"run", "--engine-url", eng.srv.URL, "--config", cfg, "--export-config", p}, extra...)
		r := lmbench(t, env, args...)
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		return readJSONFile(t, p)
	}
	fileOnly := export(nil)
	if fileOnly["seed"] != 1.0 || fileOnly["ldqa_document_length"] != 111.0 || fileOnly["ldqa_num_inflight_requests"] != 3.0 {
		t.Errorf("file over plugin defaults: %v", fileOnly)
	}
	env := []string{"LMBENCH_SEED=2", "LMBENCH_LDQA_DOCUMENT_LENGTH=222", "LMBENCH_KV_CACHE_VOLUME=4"}
	withEnv := export(env)
	if withEnv["seed"] != 2.0 || withEnv["ldqa_document_length"] != 222.0 || withEnv["kv_cache_volume"] != 4.0 || withEnv["ldqa_query_per_document"] != 5.0 {
		t.Errorf("env over file: %v", withEnv)
	}
	// A flag wins even when it equals the default (the original's Q2 dropped those).
	withFlags := export(env, "--seed", "42", "--ldqa-document-length", "333")
	if withFlags["seed"] != 42.0 || withFlags["ldqa_document_length"] != 333.0 || withFlags["kv_cache_volume"] != 4.0 {
		t.Errorf("flags over env: %v", withFlags)
	}
}

// --config with --no-interactive still checks required arguments (the
// original's Q1 dropped the check), and a file without tokens per GB never
// falls back to a default LMCache URL (Q3).
func TestConfigKeepsRequiredArgumentCheck(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	cfg := writeTemp(t, "c.json", `{"workload": "random-prefill", "model": "m"}`)
	r := lmbench(t, nil, "run", "--config", cfg, "--no-interactive")
	want := "Missing required arguments: --engine-url, --tokens-per-gb-kvcache or --lmcache-url. Provide them or remove --no-interactive for guided setup."
	if r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	r = lmbench(t, nil, "run", "--config", cfg, "--export-config", filepath.Join(t.TempDir(), "x.json"))
	if r.code != 2 || !strings.Contains(r.stderr, "remove --export-config for guided setup") {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// Without a terminal and without --no-interactive, missing arguments fail
// at once: stdin (a pipe nobody writes to) is never read.
func TestNonTerminalStdinNeverHangs(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	cmd := exec.Command(filepath.Join(binDir, "lmbench"), "run", "--workload", "random-prefill")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	cmd.Stdin = pr
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if exitCode(err) != 2 || !strings.Contains(errb.String(), "Missing required arguments: --engine-url, --tokens-per-gb-kvcache or --lmcache-url") ||
			!strings.Contains(errb.String(), "not a terminal") {
			t.Errorf("exit %d, stderr:\n%s", exitCode(err), errb.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("lmbench waited on a non-terminal stdin")
	}
}

// --model is matched on LMCache's /status; --served-model-name is sent to the engine.
func TestServedModelNameAndLMCacheLookup(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t, withModels("fake-model", "big", "other"))
	var statusHits atomic.Int32
	lmc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/status" {
			http.NotFound(w, r)
			return
		}
		statusHits.Add(1)
		w.Write([]byte(`{"is_healthy":true,"cache_context_meta":{"0":{"model_name":"org/big-model","world_size":1,"kv_cache_layout":{"cache_size_per_token":163840}}}}`))
	}))
	defer lmc.Close()
	dir := t.TempDir()
	p := filepath.Join(dir, "cfg.json")
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload", "random-prefill", "--lmcache-url", lmc.URL,
		"--model", "org/big-model", "--served-model-name", "big", "--rp-num-requests", "2", "--rp-request-length", "10",
		"-q", "--no-csv", "--output-dir", dir, "--export-config", p)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got := readJSONFile(t, p)
	if got["tokens_per_gb_kvcache"] != 6553.0 || got["model"] != "org/big-model" || got["served_model_name"] != "big" || statusHits.Load() != 1 {
		t.Errorf("exported %v (status hits %d)", got, statusHits.Load())
	}
	// Running from the export: the served name reaches the engine, LMCache is not asked again.
	r = lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--config", p, "-q", "--no-csv", "--output-dir", dir, "--overwrite")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := eng.requests()
	if len(reqs) != 2 || reqs[0]["model"] != "big" || statusHits.Load() != 1 {
		t.Errorf("%d requests, model %v, status hits %d", len(reqs), reqs[0]["model"], statusHits.Load())
	}
	// The original's message for a model LMCache does not serve.
	r = lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload", "random-prefill", "--lmcache-url", lmc.URL,
		"--model", "other", "--no-interactive", "-q", "--output-dir", dir, "--overwrite")
	if r.code != 1 || !strings.Contains(r.stderr, "Model 'other' not found on LMCache server. Available: org/big-model") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	dir := t.TempDir()
	base := []string{"run", "--engine-url", eng.srv.URL, "--tokens-per-gb-kvcache", "8192", "--no-interactive", "-q", "--output-dir", dir}
	typo := writeTemp(t, "typo.json", `{"workload": "long-doc-qa", "ldqa_documnet_length": 100}`)
	badType := writeTemp(t, "bad.yaml", "workload: long-doc-qa\nldqa_document_length: many\n")
	zero := writeTemp(t, "zero.toml", "workload = \"long-doc-qa\"\nldqa_document_length = 0\n")
	unknownWL := writeTemp(t, "wl.json", `{"workload": "nope"}`)
	tests := map[string]struct {
		env  []string
		args []string
		code int
		want []string
	}{
		"unreadable file": {nil, append(base, "--config", filepath.Join(dir, "missing.json")), 2,
			[]string{"--config", "missing.json", "cannot read the file", "expected a readable JSON, YAML or TOML file"}},
		"key typo": {nil, append(base, "--config", typo), 2,
			[]string{typo, `unknown key "ldqa_documnet_length"`, `did you mean "ldqa_document_length"`}},
		"wrong type in file": {nil, append(base, "--config", badType), 2,
			[]string{badType, `key "ldqa_document_length"`, `expected an integer, got "many"`}},
		"invalid value from file": {nil, append(base, "--config", zero), 2,
			[]string{`key "ldqa_document_length" in ` + zero, "must be positive, got 0"}},
		"unknown workload in file": {nil, append(base, "--config", unknownWL), 2,
			[]string{`key "workload" in ` + unknownWL, `unknown workload "nope"`, "long-doc-qa"}},
		"bad float flag": {nil, append(base, "--workload", "random-prefill", "--kv-cache-volume", "abc"), 2,
			[]string{`invalid argument "abc" for "--kv-cache-volume" flag: expected a number, got "abc"`}},
		"bad int flag": {nil, append(base, "--workload", "random-prefill", "--rp-num-requests", "1.5"), 2,
			[]string{`"--rp-num-requests"`, `expected an integer, got "1.5"`}},
		"bad env": {[]string{"LMBENCH_RP_NUM_REQUESTS=lots"}, append(base, "--workload", "random-prefill"), 2,
			[]string{"LMBENCH_RP_NUM_REQUESTS", `expected an integer, got "lots"`}},
		"invalid value from env": {[]string{"LMBENCH_LDQA_DOCUMENT_LENGTH=0"}, append(base, "--workload", "long-doc-qa"), 2,
			[]string{"LMBENCH_LDQA_DOCUMENT_LENGTH: document_length must be positive, got 0"}},
		"flag typo": {nil, append(base, "--workload", "long-doc-qa", "--ldqa-documnet-length", "5"), 2,
			[]string{"unknown flag: --ldqa-documnet-length (did you mean --ldqa-document-length?)"}},
		"later original's key": {nil, append(base, "--config", writeTemp(t, "maxout.json", `{"workload": "random-prefill", "ldqa_max_output_length": 64}`)), 2,
			[]string{`key "ldqa_max_output_length": only 128 is supported (lmbench always behaves so), got 64`}},
		"prefix claimed twice": {nil, append(base, "--workload", "random-prefill", "--exporter-plugin", filepath.Join(binDir, "lmbench-exporter-csv")), 1,
			[]string{"plugins csv and csv both claim the flag prefix --csv-"}},
		"bad log level": {nil, append(base, "--workload", "random-prefill", "--log-level", "loud"), 2,
			[]string{"--log-level", "expected one of trace, debug, info, warn, error", `got "loud"`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := lmbench(t, tc.env, tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d\nstderr: %s", r.code, tc.code, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
	if n := len(eng.requests()); n != 0 {
		t.Errorf("the engine got %d requests from invalid invocations", n)
	}
}

// The bash completion script completes plugin flags of the named workload
// through `lmbench __complete`.
func TestBashCompletion(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script := `source <(lmbench completion bash)
COMP_WORDS=(lmbench run --workload long-doc-qa --ldqa-shuf); COMP_CWORD=4; _lmbench; echo "${COMPREPLY[@]}"
COMP_WORDS=(lmbench run --workload ""); COMP_CWORD=3; _lmbench; echo "${COMPREPLY[@]}"
COMP_WORDS=(lmbench comp); COMP_CWORD=1; _lmbench; echo "${COMPREPLY[@]}"
COMP_WORDS=(lmbench report --re); COMP_CWORD=2; _lmbench; echo "${COMPREPLY[@]}"`
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 4 || lines[0] != "--ldqa-shuffle-policy" || !strings.Contains(lines[1], "long-doc-qa") ||
		!strings.Contains(lines[1], "random-prefill") || lines[2] != "compare completion" || lines[3] != "--resamples" {
		t.Errorf("completions:\n%s", out)
	}
	r := lmbench(t, nil, "completion", "tcsh")
	if r.code != 2 || !strings.Contains(r.stderr, `expected one of bash, zsh, fish, got "tcsh"`) {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
}

// Off a terminal: a plain progress line (no escape codes) instead of the
// live display; --log-format console gives human-readable logs anyway;
// -q turns progress off.
func TestProgressAndLogFormatOffTerminal(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t, withDelay(2500*time.Millisecond)) // the plain line comes every 2 s
	dir := t.TempDir()
	args := []string{"run", "--engine-url", eng.srv.URL, "--workload", "random-prefill", "--rp-num-requests", "4",
		"--rp-request-length", "20", "--tokens-per-gb-kvcache", "1000", "--no-csv", "--output-dir", dir, "--overwrite"}
	r := lmbench(t, nil, append(args, "--log-format", "console")...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "[measure] done 0/4  failed 0  in-flight 4") {
		t.Errorf("no plain progress line:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr+r.stdout, "\x1b") {
		t.Errorf("escape codes off a terminal:\n%q", r.stderr)
	}
	if !strings.Contains(r.stderr, "INF model auto-detected model=fake-model") {
		t.Errorf("console log format not used:\n%s", r.stderr)
	}
	r = lmbench(t, nil, append(args, "-q")...)
	if r.code != 0 || strings.Contains(r.stderr, "[measure]") || !strings.Contains(r.stderr, `"level":"info"`) {
		t.Errorf("exit %d, -q stderr:\n%s", r.code, r.stderr)
	}
}

// --export-config with a file type it cannot write fails before the
// engine is asked for its model (and before any form).
func TestExportConfigTypeCheckedFirst(t *testing.T) {
	needBinaries(t)
	t.Setenv("LMBENCH_PLUGIN_PATH", binDir)
	var hits atomic.Int64
	eng := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model"}]}`))
	}))
	defer eng.Close()
	var stdout, stderr bytes.Buffer
	code, err := cmdRun([]string{"--engine-url", eng.URL, "--workload", "long-doc-qa", "--tokens-per-gb-kvcache", "9",
		"--export-config", filepath.Join(t.TempDir(), "run.txt")}, strings.NewReader(""), &stdout, &stderr)
	if code != exitFailed || err == nil || !strings.Contains(err.Error(), `--export-config`) || !strings.Contains(err.Error(), `unknown file type ".txt": expected .json, .yaml, .yml or .toml`) {
		t.Fatalf("code %d err %v", code, err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the engine got %d requests before the export path was checked", n)
	}
}
