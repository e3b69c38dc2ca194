package main

// End-to-end tests: the real lmbench binary launches the real plugin
// binaries over gRPC and benchmarks a real HTTP server (an OpenAI-compatible
// fake defined here, not lmbench's own simulator).

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lmbench/lmbench/core/invocation"
	"github.com/lmbench/lmbench/core/record"
)

// Exit codes, as the tests name them (invocation's).
const (
	exitOK          = invocation.ExitOK
	exitFailed      = invocation.ExitFailed
	exitUsage       = invocation.ExitUsage
	exitQuit        = invocation.ExitQuit
	exitInterrupted = invocation.ExitInterrupted
)

var binDir string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		return m.Run()
	}
	binDir = os.Getenv("LMBENCH_BIN")
	if binDir == "" {
		dir, err := os.MkdirTemp("", "lmbench-e2e-bin")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		root, _ := filepath.Abs("../..")
		cmd := exec.Command("make", "-C", root, "build", "BIN="+dir)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building binaries:", err)
			return 1
		}
		binDir = dir
	}
	return m.Run()
}

func needBinaries(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test (builds and launches binaries)")
	}
}

// fakeEngine is an OpenAI-compatible streaming server that records requests.
type fakeEngine struct {
	mu      sync.Mutex
	bodies  []map[string]any
	auth    []string
	delay   func(body map[string]any) time.Duration
	fail    func(body map[string]any) bool
	started chan string
	models  []string // what GET /v1/models lists (default fake-model)
	srv     *httptest.Server
	chunks  int
}

func newFakeEngine(t *testing.T, opts ...func(*fakeEngine)) *fakeEngine {
	f := &fakeEngine{chunks: 3, started: make(chan string, 10000)}
	for _, o := range opts {
		o(f) // before the server starts: its handlers read these fields
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// withModels makes the engine list these models (lmbench checks that the
// one it sends is among them).
func withModels(ids ...string) func(*fakeEngine) {
	return func(f *fakeEngine) { f.models = ids }
}

func withDelay(d time.Duration) func(*fakeEngine) {
	return func(f *fakeEngine) { f.delay = func(map[string]any) time.Duration { return d } }
}

func (f *fakeEngine) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/models" {
		ids := f.models
		if ids == nil {
			ids = []string{"fake-model"}
		}
		var list []map[string]string
		for _, id := range ids {
			list = append(list, map[string]string{"id": id, "object": "model"})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": list})
		return
	}
	if r.URL.Path != "/v1/chat/completions" && r.URL.Path != "/v1/completions" {
		http.NotFound(w, r)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	f.started <- promptOf(body)
	if f.fail != nil && f.fail(body) {
		http.Error(w, `{"error":{"message":"boom"}}`, 500)
		return
	}
	if f.delay != nil {
		select {
		case <-time.After(f.delay(body)):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	n := int(body["max_tokens"].(float64))
	n = min(n, f.chunks)
	words := len(strings.Fields(promptOf(body)))
	for i := range n {
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok%d \"}}]}\n\n", i)
		fl.Flush()
	}
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d}}\n\n", words, n)
	fmt.Fprint(w, "data: [DONE]\n\n")
	fl.Flush()
}

func promptOf(body map[string]any) string {
	if p, ok := body["prompt"].(string); ok {
		return p
	}
	var parts []string
	for _, m := range body["messages"].([]any) {
		parts = append(parts, m.(map[string]any)["content"].(string))
	}
	return strings.Join(parts, "\n")
}

func (f *fakeEngine) requests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.bodies...)
}

type result struct {
	code           int
	stdout, stderr string
}

// lmbench runs the built binary and waits for it.
func lmbench(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "lmbench"), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

var originalColumns = []string{"request_id", "successful", "ttft", "request_latency", "num_input_tokens",
	"num_output_tokens", "decode_speed", "submit_time", "first_token_time", "finish_time", "error"}

func TestLongDocQAEndToEnd(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	out := t.TempDir()
	r := lmbench(t, []string{"OPENAI_API_KEY=sk-e2e-secret-7731"}, "run", "--engine-url", eng.srv.URL,
		"--workload", "long-doc-qa", "--tokens-per-gb-kvcache", "8192", "--kv-cache-volume", "1",
		"--ldqa-document-length", "2000", "--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := eng.requests()
	if len(reqs) != 12 {
		t.Fatalf("engine saw %d requests, want 4 warmup + 8 measured", len(reqs))
	}
	hi := strings.TrimSuffix(strings.Repeat("hi ", 1990), " ")
	for i, b := range reqs[:4] {
		msgs := b["messages"].([]any)
		want := fmt.Sprintf("Document %d: %s", i, hi)
		if len(msgs) != 1 || msgs[0].(map[string]any)["content"] != want || b["max_tokens"].(float64) != 1 {
			t.Errorf("warmup %d: max_tokens %v, content starts %q", i, b["max_tokens"], trunc(promptOf(b)))
		}
	}
	questions := []string{"What is this document about?", "Summarize the key points.",
		"What is the main topic discussed?", "Provide a brief overview."}
	seen := map[string]bool{}
	for _, b := range reqs[4:] {
		p := promptOf(b)
		var d, q int
		if _, err := fmt.Sscanf(p, "Document %d:", &d); err != nil {
			t.Fatalf("measured prompt %q", trunc(p))
		}
		idx := strings.LastIndex(p, "\n\nQuestion ")
		fmt.Sscanf(p[idx:], "\n\nQuestion %d:", &q)
		want := fmt.Sprintf("Document %d: %s\n\nQuestion %d: %s", d, hi, q, questions[q%4])
		if p != want || b["max_tokens"].(float64) != 128 || b["stream"] != true || b["temperature"].(float64) != 0 {
			t.Errorf("measured request doc %d q %d differs from the spec", d, q)
		}
		if so, _ := b["stream_options"].(map[string]any); so["include_usage"] != true {
			t.Errorf("stream_options = %v", b["stream_options"])
		}
		if b["model"] != "fake-model" {
			t.Errorf("model %v, want the auto-detected fake-model", b["model"])
		}
		seen[fmt.Sprint(d, q)] = true
	}
	if len(seen) != 8 {
		t.Errorf("measured (doc, query) pairs not distinct: %v", seen)
	}
	for _, a := range eng.auth {
		if a != "Bearer sk-e2e-secret-7731" {
			t.Fatalf("Authorization = %q", a)
		}
	}
	rows := readCSV(t, filepath.Join(out, "bench_results.csv"))
	if len(rows) != 9 {
		t.Fatalf("CSV has %d rows, want header + 8", len(rows))
	}
	if got := strings.Join(rows[0][:11], ","); got != strings.Join(originalColumns, ",") {
		t.Errorf("CSV columns = %s", got)
	}
	for _, row := range rows[1:] {
		if row[1] != "True" || !strings.HasPrefix(row[0], "doc") {
			t.Errorf("row %v", row)
		}
	}
	var summary struct {
		Config  map[string]any     `json:"config"`
		Results map[string]float64 `json:"results"`
	}
	b, err := os.ReadFile(filepath.Join(out, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &summary); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"total_requests", "successful_requests", "failed_requests", "elapsed_time", "mean_ttft_ms",
		"mean_decode_speed", "mean_request_latency_ms", "input_throughput", "output_throughput", "total_input_tokens",
		"total_output_tokens", "p50_ttft_ms", "p90_ttft_ms", "p99_ttft_ms", "p50_decode_speed", "p90_decode_speed",
		"p99_decode_speed", "p50_request_latency_ms", "p90_request_latency_ms", "p99_request_latency_ms"} {
		if _, ok := summary.Results[k]; !ok {
			t.Errorf("bench_summary.json results lack %q", k)
		}
	}
	if summary.Results["total_requests"] != 8 || summary.Results["successful_requests"] != 8 {
		t.Errorf("results %v", summary.Results)
	}
	if summary.Config["workload"] != "long-doc-qa" || summary.Config["tokens_per_gb_kvcache"].(float64) != 8192 {
		t.Errorf("config %v", summary.Config)
	}
	// The secret reaches the engine and nothing else.
	for _, f := range []string{"bench_results.csv", "bench_summary.json", "bench_journal.jsonl"} {
		b, _ := os.ReadFile(filepath.Join(out, f))
		if bytes.Contains(b, []byte("sk-e2e-secret")) {
			t.Errorf("%s contains the API key", f)
		}
	}
	if strings.Contains(r.stdout+r.stderr, "sk-e2e-secret") {
		t.Error("the API key was printed")
	}
	// The plugin's logs reach the host's log under the plugin's name, with
	// their level; stderr is not a terminal, so the log is JSON.
	for _, msg := range []string{"Warmup 1/4", "Warmup complete: 4 documents sent"} {
		if !hasLog(r.stderr, "info", "long-doc-qa", msg) {
			t.Errorf("plugin log line %q missing, or without level or plugin name:\n%s", msg, r.stderr)
		}
	}
	// The banner (spec §2.6) precedes the summary (spec §7.1) on stdout.
	if !strings.Contains(r.stdout, " Workload: long-doc-qa") || !strings.Contains(r.stdout, "Documents:") ||
		!strings.Contains(r.stdout, "Engine Benchmark Result (long-doc-qa)") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}

func TestNoCSV(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload", "random-prefill",
		"--rp-num-requests", "3", "--rp-request-length", "20", "--tokens-per-gb-kvcache", "1000",
		"--no-interactive", "-q", "--no-csv", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for name, want := range map[string]bool{"bench_results.csv": false, "bench_summary.json": false, "bench_journal.jsonl": true} {
		if _, err := os.Stat(filepath.Join(out, name)); (err == nil) != want {
			t.Errorf("%s exists = %v, want %v", name, err == nil, want)
		}
	}
}

// kill -9 of the host: the plugins notice their parent is gone and exit,
// and the journal keeps every request that had finished.
func TestHostKilledLeavesJournalAndNoOrphans(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t, withDelay(50*time.Millisecond))
	out := t.TempDir()
	cmd, _, _ := startLmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload", "long-doc-qa",
		"--tokens-per-gb-kvcache", "10000", "--kv-cache-volume", "1", "--ldqa-document-length", "100",
		"--no-interactive", "-q", "--output-dir", out)
	var plugins []int
	waitFor(t, "both plugins", func() bool {
		plugins = childPids(t, cmd.Process.Pid, "lmbench-")
		return len(plugins) == 2
	})
	journal := filepath.Join(out, "bench_journal.jsonl")
	waitFor(t, "finished requests in the journal", func() bool { return journaled(journal) >= 5 })
	cmd.Process.Kill()
	cmd.Wait()
	recs := readJournal(t, journal).Records
	eng.mu.Lock()
	sent := len(eng.bodies)
	eng.mu.Unlock()
	// Every request the engine answered before the kill is in the journal,
	// except at most those in flight at that moment (3 at a time here + 1 racing).
	if len(recs) < 5 || sent-len(recs) > 4 {
		t.Errorf("journal has %d records, the engine saw %d requests", len(recs), sent)
	}
	// The parent-death signal (and the SDK's watchdog, a poll a second):
	// no plugin outlives the host; 5 s tells that from a busy machine.
	died := time.Now()
	for _, pid := range plugins {
		for alive(pid) {
			if time.Since(died) > 5*time.Second {
				t.Fatalf("plugin %d still alive 5s after the host was killed", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func trunc(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

func TestRandomPrefillByPluginPath(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	out := t.TempDir()
	// A binary given by path may be called anything.
	renamed := filepath.Join(t.TempDir(), "myprefill")
	copyFile(t, filepath.Join(binDir, "lmbench-workload-random-prefill"), renamed)
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload-plugin", renamed,
		"--rp-num-requests", "20", "--rp-request-length", "100", "--tokens-per-gb-kvcache", "1000",
		"--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := eng.requests()
	if len(reqs) != 20 {
		t.Fatalf("%d requests, want 20 (no warmup)", len(reqs))
	}
	hi := strings.TrimSuffix(strings.Repeat("hi ", 90), " ")
	got := map[string]bool{}
	for _, b := range reqs {
		got[promptOf(b)] = true
		if b["max_tokens"].(float64) != 1 {
			t.Errorf("max_tokens %v", b["max_tokens"])
		}
	}
	for i := range 20 {
		if !got[fmt.Sprintf("Request %d: %s", i, hi)] {
			t.Errorf("prompt %d missing or different", i)
		}
	}
	if rows := readCSV(t, filepath.Join(out, "bench_results.csv")); len(rows) != 21 {
		t.Errorf("CSV rows %d", len(rows))
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestUsageAndValidationErrors(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	base := []string{"run", "--engine-url", eng.srv.URL, "--tokens-per-gb-kvcache", "8192", "--no-interactive", "-q", "--output-dir", t.TempDir()}
	tests := map[string]struct {
		args []string
		code int
		want []string
	}{
		"missing everything": {[]string{"run", "--no-interactive"}, 2,
			[]string{"Missing required arguments: --engine-url, --workload, --tokens-per-gb-kvcache or --lmcache-url"}},
		"unknown flag": {append(base, "--workload", "long-doc-qa", "--ldqa-bogus", "1"), 2, []string{"--ldqa-bogus", "--ldqa-"}},
		"bad number":   {append(base, "--workload", "long-doc-qa", "--ldqa-document-length", "abc"), 2, []string{"--ldqa-document-length"}},
		"invalid value": {append(base, "--workload", "long-doc-qa", "--ldqa-document-length", "0"), 2,
			[]string{"--ldqa-document-length: document_length must be positive, got 0"}},
		"bad enum":         {append(base, "--workload", "long-doc-qa", "--ldqa-shuffle-policy", "zigzag"), 2, []string{"--ldqa-shuffle-policy", "random, tile", "zigzag"}},
		"unknown workload": {append(base, "--workload", "nope"), 2, []string{`unknown workload "nope"`, "long-doc-qa"}},
		"kv volume":        {append(base, "--workload", "random-prefill", "--kv-cache-volume", "0"), 2, []string{"--kv-cache-volume: must be positive, got 0"}},
		"malformed url": {[]string{"run", "--engine-url", "http://[bad", "--workload", "random-prefill", "--tokens-per-gb-kvcache", "8192",
			"--no-interactive", "-q", "--output-dir", t.TempDir()}, 2, []string{`--engine-url: "http://[bad" is not a URL`}},
		"not a plugin": {append(base, "--workload-plugin", "/bin/true"), 1, []string{"/bin/true is not a working lmbench workload plugin",
			"it wrote nothing on stdout, where a plugin's first line is its handshake"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := lmbench(t, nil, tc.args...)
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
}

func TestVersionMismatch(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	bin := filepath.Join(t.TempDir(), "future-plugin")
	build := exec.Command("go", "build", "-o", bin, "./testdata/v99plugin")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	r := lmbench(t, nil, "run", "--engine-url", "http://127.0.0.1:1", "--workload-plugin", bin,
		"--tokens-per-gb-kvcache", "1", "--no-interactive")
	if r.code != 1 || !strings.Contains(r.stderr, bin) || !strings.Contains(r.stderr, "protocol v99") || !strings.Contains(r.stderr, "speaks v1") {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	// The clear message alone: not go-plugin's error that the process
	// lmbench killed has exited.
	if strings.Contains(r.stderr, `"level":"error"`) || strings.Contains(r.stderr, "plugin process exited") {
		t.Errorf("an error-level log line comes before the message:\n%s", r.stderr)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.Contains(string(out), "protocol v99.") {
		t.Errorf("%s version = %q (%v), want it to name protocol v99", bin, out, err)
	}
}

func TestFailedRequestsExitOne(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t, func(f *fakeEngine) {
		f.fail = func(b map[string]any) bool { return strings.HasPrefix(promptOf(b), "Request 3:") }
	})
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload", "random-prefill",
		"--rp-num-requests", "5", "--rp-request-length", "20", "--tokens-per-gb-kvcache", "1000",
		"--no-interactive", "-q", "--output-dir", out)
	if r.code != 1 || !strings.Contains(r.stderr, "1 of 5 measured requests failed") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	rows := readCSV(t, filepath.Join(out, "bench_results.csv"))
	failed := 0
	for _, row := range rows[1:] {
		if row[1] == "False" {
			failed++
			if row[0] != "prefill_3" || !strings.Contains(row[10], "HTTP 500") || row[2] != "-1.0" {
				t.Errorf("failed row %v", row)
			}
		}
	}
	if len(rows) != 6 || failed != 1 {
		t.Fatalf("rows %d failed %d", len(rows)-1, failed)
	}
}

// childPids returns the pids of parent's children whose command line contains name.
func childPids(t *testing.T, parent int, name string) []int {
	t.Helper()
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if ppid == parent && strings.Contains(string(cmdline), name) && fields[0] != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	return !strings.HasPrefix(strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0], "Z")
}

// startLmbench starts the binary without waiting.
func startLmbench(t *testing.T, env []string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "lmbench"), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, &out, &errb
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// Killing the workload plugin mid-run: lmbench exits non-zero naming the
// plugin, keeps the rows measured so far, and leaves no plugin behind.
func TestWorkloadPluginKilledMidRun(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t, withDelay(100*time.Millisecond))
	out := t.TempDir()
	cmd, _, stderr := startLmbench(t, []string{"OPENAI_API_KEY=sk-never-in-plugins"}, "run", "--engine-url", eng.srv.URL, "--workload", "long-doc-qa",
		"--tokens-per-gb-kvcache", "1000", "--kv-cache-volume", "1", "--ldqa-document-length", "100",
		"--ldqa-num-inflight-requests", "1", "--no-interactive", "-q", "--output-dir", out)
	var wl, ex []int
	waitFor(t, "the plugins to start", func() bool {
		wl = childPids(t, cmd.Process.Pid, "lmbench-workload-long-doc-qa")
		ex = childPids(t, cmd.Process.Pid, "lmbench-exporter-csv")
		return len(wl) == 1 && len(ex) == 1
	})
	// Plugins get no secrets in their environment.
	env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", wl[0]))
	if bytes.Contains(env, []byte("sk-never-in-plugins")) || bytes.Contains(env, []byte("OPENAI_API_KEY")) {
		t.Error("the workload plugin's environment contains the API key")
	}
	csvPath := filepath.Join(out, "bench_results.csv")
	waitFor(t, "measured rows in the CSV", func() bool {
		b, _ := os.ReadFile(csvPath)
		return bytes.Count(b, []byte("\n")) >= 3 // header + 2 rows
	})
	syscall.Kill(wl[0], syscall.SIGKILL)
	err := cmd.Wait()
	if code := exitCode(err); code == 0 {
		t.Fatalf("exit 0 after the workload plugin was killed\n%s", stderr)
	}
	if !strings.Contains(stderr.String(), "workload plugin long-doc-qa") || !strings.Contains(stderr.String(), "crashed or exited") {
		t.Errorf("stderr does not name the dead plugin:\n%s", stderr)
	}
	rows := readCSV(t, csvPath)
	if len(rows) < 3 {
		t.Errorf("CSV kept %d rows", len(rows)-1)
	}
	recs := readJournal(t, filepath.Join(out, record.JournalName)).Records
	if len(recs) < len(rows)-1 {
		t.Errorf("journal has %d records, CSV %d", len(recs), len(rows)-1)
	}
	for _, pid := range append(wl, ex...) {
		waitFor(t, fmt.Sprintf("plugin %d to be gone", pid), func() bool { return !alive(pid) })
	}
}

// readJournal reads a run's journal with core's reader, as lmbench
// export does (a torn last line, from a killed host, is left out).
func readJournal(t *testing.T, path string) *record.Contents {
	t.Helper()
	c, err := record.ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// journaled returns how many requests the journal of a running lmbench
// holds so far: 0 while it cannot be read yet.
func journaled(path string) int {
	c, err := record.ReadJournal(path)
	if err != nil {
		return 0
	}
	return len(c.Records)
}

// Ctrl-C: no new requests, in-flight ones finish, files complete, exit 130.
func TestInterruptExits130WithCompleteFiles(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t, withDelay(50*time.Millisecond))
	out := t.TempDir()
	cmd, stdout, stderr := startLmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload", "long-doc-qa",
		"--tokens-per-gb-kvcache", "10000", "--kv-cache-volume", "1", "--ldqa-document-length", "100",
		"--ldqa-num-inflight-requests", "2", "--no-interactive", "-q", "--json", "--output-dir", out)
	csvPath := filepath.Join(out, "bench_results.csv")
	waitFor(t, "measured rows", func() bool {
		b, _ := os.ReadFile(csvPath)
		return bytes.Count(b, []byte("\n")) >= 5
	})
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if code := exitCode(err); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, stderr)
	}
	rows := readCSV(t, csvPath)
	recs := readJournal(t, filepath.Join(out, record.JournalName)).Records
	measured := 0
	for _, r := range recs {
		if r.Phase == record.Measure {
			measured++
		}
	}
	if len(rows)-1 != measured || measured == 0 || measured >= 200 {
		t.Errorf("CSV rows %d, journal measured %d (of 200 planned)", len(rows)-1, measured)
	}
	if !strings.Contains(stdout.String(), "interrupted") {
		t.Errorf("summary does not say interrupted:\n%s", stdout)
	}
	var summary map[string]any
	b, _ := os.ReadFile(filepath.Join(out, "bench_summary.json"))
	if err := json.Unmarshal(b, &summary); err != nil {
		t.Errorf("bench_summary.json: %v", err)
	}
	for _, pid := range childPids(t, cmd.Process.Pid, "lmbench-") {
		t.Errorf("plugin %d left running", pid)
	}
}

var _ = io.Discard

// hasLog reports whether the JSON log on stderr has a line with this
// level, plugin name and message.
func hasLog(stderr, level, plugin, msg string) bool {
	for _, line := range strings.Split(stderr, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		if m["level"] == level && m["plugin"] == plugin && m["message"] == msg {
			return true
		}
	}
	return false
}
