package main

// The fault suite: the real binaries against engines that stall, die,
// fail warmup, against a full disk, a second Ctrl-C, a low open-file
// limit and bad input. Each test is one case of "runs that never
// mislead": the run ends on its own, says why, and keeps every finished
// request in the files it names.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lmbench/lmbench/core/record"
)

// lockedBuffer is a bytes.Buffer a test may read while the process
// writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startWatched starts a command whose output the test reads while it
// runs.
func startWatched(t *testing.T, env []string, name string, args ...string) (*exec.Cmd, *lockedBuffer, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, &out, &errb
}

// startSim serves the built-in engine in a process of its own and
// returns it and its base URL.
func startSim(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	return startSimEnv(t, nil, args...)
}

// startSimEnv is startSim with variables added to the environment.
func startSimEnv(t *testing.T, env []string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "lmbench"), append([]string{"sim", "--port", "0", "--log-level", "warn"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("lmbench sim: %v", err)
	}
	// lmbench sim serving model "…" at http://127.0.0.1:N/v1 (Ctrl-C to stop)
	_, rest, ok := strings.Cut(line, " at ")
	url, _, _ := strings.Cut(rest, " ")
	if !ok || !strings.HasPrefix(url, "http://") {
		t.Fatalf("lmbench sim printed %q", line)
	}
	return cmd, url
}

// stallingEngine answers /v1/models, and every completion with 200 and
// SSE headers, then sends chunks (0: none) and stalls until the client
// leaves.
func stallingEngine(t *testing.T, chunks int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"fake-model","object":"model"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for i := range chunks {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok%d \"}}]}\n\n", i)
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// summaryRunBlock reads bench_summary.json's run block.
func summaryRunBlock(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("bench_summary.json: %v\n%s", err, b)
	}
	return d["run"].(map[string]any)
}

// An engine that sends headers (or a first chunk) and then nothing:
// every request fails by the limit that applies, within it, and the run
// ends on its own with exit 1 and complete files. Before the first
// token the first-token limit applies (the prefill may take minutes),
// after it the idle limit.
func TestStalledEngineFailsEveryRequestWithinTheLimit(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	tests := map[string]struct {
		chunks     int
		limit      time.Duration
		want, flag string
	}{
		"after headers": {0, 800 * time.Millisecond, "no first token within 800ms", "(--first-token-timeout)"},
		"mid-stream":    {1, 500 * time.Millisecond, "no data for 500ms", "(--idle-timeout)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := stallingEngine(t, tc.chunks)
			out := t.TempDir()
			start := time.Now()
			r := lmbench(t, nil, "run", "--engine-url", srv.URL, "--workload", "random-prefill",
				"--rp-num-requests", "6", "--rp-request-length", "20", "--tokens-per-gb-kvcache", "1000",
				"--first-token-timeout", "800ms", "--idle-timeout", "500ms",
				"--no-interactive", "-q", "--json", "--output-dir", out)
			took := time.Since(start)
			if r.code != 1 || !strings.Contains(r.stderr, "6 of 6 measured requests failed") {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			recs := readJournal(t, filepath.Join(out, record.JournalName)).Records
			if len(recs) != 6 {
				t.Fatalf("journal has %d records, want 6", len(recs))
			}
			for _, rec := range recs {
				el := rec.Finish.Sub(rec.Submit)
				if rec.Success || !strings.HasPrefix(rec.Error, tc.want) || !strings.HasSuffix(rec.Error, tc.flag) ||
					el < tc.limit || el > tc.limit+2*time.Second {
					t.Errorf("%s: success %v after %v, error %q; want failed within %v + 2s with %q … %q",
						rec.RequestID, rec.Success, el, rec.Error, tc.limit, tc.want, tc.flag)
				}
			}
			checkCSVMatchesJournal(t, filepath.Join(out, "bench_results.csv"), recs)
			if run := summaryRunBlock(t, out); run["status"] != "completed" || run["finished_requests"] != 6.0 {
				t.Errorf("summary run block %v", run)
			}
			t.Logf("the run took %v", took)
		})
	}
}

// The engine, a process of its own, killed mid-run: lmbench stops within
// 10 s with the default policy, says why, exits 1, and the summary says
// aborted.
func TestEngineKilledMidRunAborts(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	t.Run("lmbench sim killed", func(t *testing.T) {
		t.Parallel()
		sim, url := startSim(t)
		checkEngineDeathAborts(t, url, func() { sim.Process.Kill() })
	})
	t.Run("another server gone", func(t *testing.T) {
		t.Parallel()
		eng := newFakeEngine(t, withDelay(20*time.Millisecond))
		checkEngineDeathAborts(t, eng.srv.URL, func() {
			// As a dead process: the port refuses, open connections drop.
			eng.srv.Listener.Close()
			eng.srv.CloseClientConnections()
		})
	})
}

// checkEngineDeathAborts runs 30 s of requests against url, calls die
// once some have finished, and checks that lmbench stops within 10 s,
// says why, and keeps every finished request.
func checkEngineDeathAborts(t *testing.T, url string, die func()) {
	out := t.TempDir()
	// 20 requests a second for 30 s.
	cmd, stdout, stderr := startWatched(t, nil, filepath.Join(binDir, "lmbench"), "run", "--engine-url", url, "--workload", "random-prefill",
		"--rp-num-requests", "600", "--rp-rate", "20", "--rp-request-length", "20", "--tokens-per-gb-kvcache", "1000",
		"--no-interactive", "-q", "--json", "--output-dir", out)
	journal := filepath.Join(out, record.JournalName)
	waitFor(t, "finished requests in the journal", func() bool { return journaled(journal) >= 10 })
	die()
	killed := time.Now()
	code := exitCode(cmd.Wait())
	took := time.Since(killed)
	t.Logf("lmbench ended %v after the engine was killed", took)
	// The abort policy stops it within seconds (refused connections in a
	// row, the health probe 3 x 2 s); the limit only tells a stop from a
	// hang, with room for a busy machine.
	if took > 30*time.Second {
		t.Errorf("lmbench ran on for %v after the engine died, want it stopped by the abort policy", took)
	}
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	if !strings.Contains(stderr.String(), "lmbench: run aborted: engine unreachable") {
		t.Errorf("stderr does not say why:\n%s", stderr)
	}
	run := summaryRunBlock(t, out)
	if run["status"] != "aborted" || !strings.Contains(fmt.Sprint(run["reason"]), "engine unreachable") {
		t.Errorf("summary run block %v", run)
	}
	if !strings.Contains(stdout.String(), "aborted: engine unreachable") {
		t.Errorf("terminal header does not say aborted:\n%s", stdout)
	}
	recs := readJournal(t, journal).Records
	if n := len(recs); n >= 600 || run["finished_requests"] != float64(n) {
		t.Errorf("journal %d records, summary finished %v (of 600 planned)", n, run["finished_requests"])
	}
	checkCSVMatchesJournal(t, filepath.Join(out, "bench_results.csv"), recs)
}

// One failed warmup request: exit 1 before the measured phase, naming it.
func TestFailedWarmupRequestExitsBeforeMeasuring(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	var n atomic.Int64
	eng := newFakeEngine(t, func(f *fakeEngine) {
		f.fail = func(map[string]any) bool { return n.Add(1) == 1 } // the first request: a warmup one
	})
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload", "long-doc-qa",
		"--tokens-per-gb-kvcache", "1000", "--kv-cache-volume", "1", "--ldqa-document-length", "100",
		"--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 1 || !strings.Contains(r.stderr, "lmbench: run aborted: warmup failed: 1 warmup request failed") ||
		!strings.Contains(r.stderr, "HTTP 500") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	recs := readJournal(t, filepath.Join(out, record.JournalName)).Records
	failed := 0
	for _, rec := range recs {
		if rec.Phase != record.Warmup {
			t.Errorf("measured request %s was sent", rec.RequestID)
		}
		if !rec.Success {
			failed++
		}
	}
	if failed != 1 || len(recs) != len(eng.requests()) {
		t.Errorf("journal has %d records (%d failed), the engine got %d requests", len(recs), failed, len(eng.requests()))
	}
	if rows := readCSV(t, filepath.Join(out, "bench_results.csv")); len(rows) != 1 {
		t.Errorf("CSV has %d measured rows, want none", len(rows)-1)
	}
	if run := summaryRunBlock(t, out); run["status"] != "aborted" {
		t.Errorf("summary run block %v", run)
	}
}

// A full disk (a small tmpfs as --output-dir): the journal fails, the run
// stops, and every finished request is in the journal lmbench names.
func TestFullDiskKeepsEveryFinishedRequest(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs as the output directory")
	}
	out := t.TempDir()
	if b, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", out).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (%v: %s): the full-disk case is not tested here", err, bytes.TrimSpace(b))
	}
	t.Cleanup(func() { exec.Command("umount", out).Run() })
	eng := newFakeEngine(t)
	tmp := t.TempDir() // where the fallback journal goes
	r := lmbench(t, []string{"TMPDIR=" + tmp}, "run", "--engine-url", eng.srv.URL, "--workload", "random-prefill",
		"--rp-num-requests", "400", "--rp-rate", "400", "--rp-request-length", "20", "--tokens-per-gb-kvcache", "1000",
		"--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 1 || !strings.Contains(r.stderr, "lmbench: run aborted: journal write failed") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	_, rest, ok := strings.Cut(r.stderr, "every finished request is in ")
	path, _, _ := strings.Cut(rest, "\n")
	if !ok || filepath.Dir(path) != tmp {
		t.Fatalf("stderr names no journal in %s:\n%s", tmp, r.stderr)
	}
	c := readJournal(t, path)
	sent := len(eng.requests())
	if len(c.Records) != sent || sent == 0 || sent >= 400 {
		t.Errorf("the journal %s has %d records, the engine answered %d requests (of 400)", path, len(c.Records), sent)
	}
	seen := map[string]bool{}
	for _, rec := range c.Records {
		if seen[rec.RequestID] {
			t.Errorf("request %s twice in the journal", rec.RequestID)
		}
		seen[rec.RequestID] = true
	}
	if c.Summary == nil || c.Summary.Status != record.Aborted {
		t.Errorf("the journal's summary %+v, want aborted", c.Summary)
	}
	if _, err := os.Stat(filepath.Join(out, "bench_summary.json")); err == nil {
		if run := summaryRunBlock(t, out); run["status"] != "aborted" {
			t.Errorf("summary run block %v", run)
		}
	}
	// The result files on the full disk are incomplete: lmbench says so,
	// and the command it prints rebuilds them from the journal it names.
	if !strings.Contains(r.stderr, "the result files may be incomplete") || !strings.Contains(r.stderr, "lmbench export --journal "+path) {
		t.Errorf("stderr does not say how to rebuild the files:\n%s", r.stderr)
	}
	rebuilt := t.TempDir()
	if x := lmbench(t, nil, "export", "--journal", path, "--output-dir", rebuilt); x.code != 0 {
		t.Fatalf("lmbench export: exit %d\n%s", x.code, x.stderr)
	}
	checkCSVMatchesJournal(t, filepath.Join(rebuilt, "bench_results.csv"), c.Records)
	t.Logf("%d requests finished; the journal is %s", sent, path)
}

// A second SIGINT cancels what is in flight and still writes the files,
// which agree with the journal; exit 130; no plugin outlives lmbench by
// more than a second.
func TestSecondInterruptFilesAgreeWithJournal(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t, func(f *fakeEngine) {
		// The first 8 answer at once, the rest hang until cancelled.
		f.delay = func(b map[string]any) time.Duration {
			var k int
			fmt.Sscanf(promptOf(b), "Request %d:", &k)
			if k < 8 {
				return 0
			}
			return time.Hour
		}
	})
	out := t.TempDir()
	cmd, _, stderr := startWatched(t, nil, filepath.Join(binDir, "lmbench"), "run", "--engine-url", eng.srv.URL, "--workload", "random-prefill",
		"--rp-num-requests", "20", "--rp-request-length", "20", "--tokens-per-gb-kvcache", "1000",
		"--exporter", "parquet", "--no-interactive", "-q", "--json", "--output-dir", out)
	journal := filepath.Join(out, record.JournalName)
	waitFor(t, "8 requests in the journal", func() bool { return journaled(journal) >= 8 })
	waitFor(t, "the 12 hung requests at the engine", func() bool { return len(eng.requests()) == 20 })
	plugins := childPids(t, cmd.Process.Pid, "lmbench-")
	if len(plugins) != 3 {
		t.Fatalf("%d plugin processes, want 3 (workload, csv, parquet)", len(plugins))
	}
	cmd.Process.Signal(os.Interrupt)
	waitFor(t, "the drain", func() bool { return strings.Contains(stderr.String(), "waiting for in-flight requests") })
	cmd.Process.Signal(os.Interrupt)
	code := exitCode(cmd.Wait())
	exited := time.Now()
	if code != exitInterrupted {
		t.Fatalf("exit %d, want %d\n%s", code, exitInterrupted, stderr)
	}
	for _, pid := range plugins {
		for alive(pid) {
			if time.Since(exited) > 5*time.Second { // a hang, not a slow machine
				t.Fatalf("plugin %d still alive 5s after lmbench exited", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	recs := readJournal(t, journal).Records
	if len(recs) != 20 {
		t.Fatalf("journal has %d records, want all 20 (8 answered, 12 cancelled)", len(recs))
	}
	cancelled := 0
	for _, r := range recs {
		if !r.Success && strings.Contains(r.Error, "context canceled") {
			cancelled++
		}
	}
	if cancelled != 12 {
		t.Errorf("%d cancelled records, want 12", cancelled)
	}
	checkCSVMatchesJournal(t, filepath.Join(out, "bench_results.csv"), recs)
	rows, _ := readParquet(t, filepath.Join(out, "bench_results.parquet"))
	checkRowsMatchJournal(t, rows, recs)
	if run := summaryRunBlock(t, out); run["status"] != "interrupted" || run["finished_requests"] != 20.0 {
		t.Errorf("summary run block %v", run)
	}
}

// 2,000 simultaneous 1,000-word requests under a hard open-file limit of
// 1,024 (and a soft one of 256, which lmbench raises): the connection
// cap makes the excess wait, and no request fails.
func TestBurstUnderLowOpenFileLimit(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit not found: cannot lower the open-file limit")
	}
	eng := newFakeEngine(t, withDelay(300*time.Millisecond))
	out := t.TempDir()
	r := func() result {
		cmd := exec.Command(prlimit, "--nofile=256:1024", filepath.Join(binDir, "lmbench"), "run", "--engine-url", eng.srv.URL,
			"--workload", "random-prefill", "--rp-num-requests", "2000", "--rp-request-length", "1000",
			"--tokens-per-gb-kvcache", "100000", "--no-interactive", "-q", "--output-dir", out)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatal(err)
		}
		return result{exitCode(err), o.String(), e.String()}
	}()
	if strings.Contains(r.stderr, "too many open files") || r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, trunc(r.stderr))
	}
	// The soft limit of 256 was raised (the Go runtime sets it to the
	// hard limit less one, to notice a later prlimit), and the cap is 90%
	// of what it leaves after 64 other files.
	var limit, conns float64
	for _, line := range strings.Split(r.stderr, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && strings.Contains(fmt.Sprint(m["message"]), "connections at once") {
			limit, _ = m["open_file_limit"].(float64)
			conns, _ = m["max_connections"].(float64)
		}
	}
	if limit < 1023 || limit > 1024 || conns != float64(int((limit-64)*0.9)) {
		t.Errorf("open-file limit %v, connection cap %v; want the hard limit 1024 (or 1023) and 90%% of it less 64", limit, conns)
	}
	rows := readCSV(t, filepath.Join(out, "bench_results.csv"))
	if len(rows) != 2001 {
		t.Fatalf("%d rows, want 2000", len(rows)-1)
	}
	for _, row := range rows[1:] {
		if row[1] != "True" {
			t.Fatalf("request %s failed: %s", row[0], row[10])
		}
	}
}

// countingServer is an engine that counts the connections made to it.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NotFound(w, r)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// Bad input: an error naming the flag (or variable) and the value,
// before any connection to the engine.
func TestBadInputNamesTheFlagBeforeAnyTraffic(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	srv, conns := countingServer(t)
	hostPort := strings.TrimPrefix(srv.URL, "http://")
	base := func(url string, extra ...string) []string {
		return append([]string{"run", "--engine-url", url, "--workload", "random-prefill", "--tokens-per-gb-kvcache", "1000",
			"--rp-num-requests", "4", "--rp-request-length", "20", "--no-interactive", "-q", "--output-dir", t.TempDir()}, extra...)
	}
	tests := map[string]struct {
		env  []string
		args []string
		want []string
	}{
		"bad scheme": {nil, base("htp://" + hostPort), []string{"--engine-url", `has the scheme "htp"; expected http:// or https://`}},
		"negative drain timeout": {nil, base(srv.URL, "--drain-timeout", "-1s"),
			[]string{"--drain-timeout: must be >= 0 (0: the default, 30s), got -1s"}},
		"negative idle timeout": {nil, base(srv.URL, "--idle-timeout", "-5s"), []string{"--idle-timeout: must be >= 0 (0: no limit), got -5s"}},
		"negative timeout from the environment": {[]string{"LMBENCH_FIRST_TOKEN_TIMEOUT=-1m"}, base(srv.URL),
			[]string{"LMBENCH_FIRST_TOKEN_TIMEOUT: must be >= 0 (0: no limit), got -1m0s"}},
		"failure rate over 1":     {nil, base(srv.URL, "--abort-failure-rate", "1.5"), []string{"--abort-failure-rate: must be between 0 and 1 (0: never), got 1.5"}},
		"negative connection cap": {nil, base(srv.URL, "--max-connections", "-1"), []string{"--max-connections: must be between 0 and"}},
		"unknown variable": {[]string{"LMBENCH_IDEL_TIMEOUT=1s"}, base(srv.URL),
			[]string{"LMBENCH_IDEL_TIMEOUT: no option has this variable (did you mean LMBENCH_IDLE_TIMEOUT?)"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := lmbench(t, tc.env, tc.args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2 (bad input)\n%s", r.code, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("the engine got %d connections from runs refused for bad input", n)
	}
}

// Plans too big to send are refused naming the flag before any request:
// the workload checks them once the engine's model is known, so only
// GET /v1/models has reached the engine.
func TestHugePlansRefusedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	tests := map[string]struct {
		args []string
		want []string
	}{
		"request count":  {[]string{"--rp-num-requests", "100000000"}, []string{"--rp-num-requests", "100000000"}},
		"request length": {[]string{"--rp-num-requests", "10", "--rp-request-length", "1000000000"}, []string{"--rp-request-length: request_length must be at most", "got 1000000000"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			eng := newFakeEngine(t)
			start := time.Now()
			r := lmbench(t, nil, append([]string{"run", "--engine-url", eng.srv.URL, "--workload", "random-prefill",
				"--tokens-per-gb-kvcache", "1000", "--no-interactive", "-q", "--output-dir", t.TempDir()}, tc.args...)...)
			if r.code != 2 || len(eng.requests()) != 0 {
				t.Fatalf("exit %d, %d requests sent\n%s", r.code, len(eng.requests()), r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			t.Logf("refused after %v", time.Since(start))
		})
	}
}

// A pasted endpoint URL is cut back to the base, with a warning, and the
// requests go to the right path.
func TestPastedEndpointURLIsStripped(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL+"/v1/chat/completions", "--workload", "random-prefill",
		"--rp-num-requests", "3", "--rp-request-length", "20", "--tokens-per-gb-kvcache", "1000",
		"--no-interactive", "-q", "--output-dir", t.TempDir())
	if r.code != 0 || len(eng.requests()) != 3 {
		t.Fatalf("exit %d, %d requests reached the engine\n%s", r.code, len(eng.requests()), r.stderr)
	}
	if !strings.Contains(r.stderr, "--engine-url: ignoring the endpoint path /chat/completions after the address") {
		t.Errorf("no warning about the stripped path:\n%s", r.stderr)
	}
}

// The built-in engine's fault switches, served by lmbench sim in a
// process of its own: an engine that dies after 30 requests aborts the
// run; one that holds every stream open after [DONE] does not stall it.
func TestSimFaultSwitches(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	run := func(t *testing.T, url string, out string) result {
		return lmbench(t, nil, "run", "--engine-url", url, "--workload", "random-prefill",
			"--rp-num-requests", "200", "--rp-rate", "100", "--rp-request-length", "20", "--tokens-per-gb-kvcache", "1000",
			"--no-interactive", "-q", "--json", "--output-dir", out)
	}
	t.Run("die after", func(t *testing.T) {
		t.Parallel()
		_, url := startSim(t, "--fault-die-after", "30")
		out := t.TempDir()
		r := run(t, url, out)
		if r.code != 1 || !strings.Contains(r.stderr, "lmbench: run aborted: engine unreachable") {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		recs := readJournal(t, filepath.Join(out, record.JournalName)).Records
		ok := 0
		for _, rec := range recs {
			if rec.Success {
				ok++
			}
		}
		if ok > 29 || len(recs) >= 200 {
			t.Errorf("%d of %d journalled requests succeeded; the engine died at the 30th of 200", ok, len(recs))
		}
		if run := summaryRunBlock(t, out); run["status"] != "aborted" {
			t.Errorf("summary run block %v", run)
		}
	})
	t.Run("hold after done", func(t *testing.T) {
		t.Parallel()
		_, url := startSim(t, "--fault-hold-after-done", "1", "--time-scale", "0")
		out := t.TempDir()
		r := run(t, url, out)
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		for _, rec := range readJournal(t, filepath.Join(out, record.JournalName)).Records {
			if !rec.Success || rec.Latency > 1 {
				t.Errorf("%s: success %v latency %.3fs: the held-open body held the request", rec.RequestID, rec.Success, rec.Latency)
			}
		}
	})
}
