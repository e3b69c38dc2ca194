package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lmbench/lmbench/core/record"
)

// An engine that lists its models and not the one lmbench would send:
// refused before any benchmark request, naming the flag and what the
// engine serves.
func TestModelNotServedRefusedBeforeRunning(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t, withModels("other-model"))
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload", "random-prefill", "--model", "fake-model",
		"--rp-num-requests", "3", "--rp-request-length", "20", "--tokens-per-gb-kvcache", "1000",
		"--no-interactive", "-q", "--output-dir", t.TempDir())
	if r.code != 1 || !strings.Contains(r.stderr, `--model "fake-model": the engine serves only "other-model"`) {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if n := len(eng.requests()); n != 0 {
		t.Errorf("%d benchmark requests sent", n)
	}
}

// An engine that turns the first request away with 401 (and cannot list
// its models, so the pre-flight check passes): the run stops at once
// with the engine's message instead of sending every request to the same
// answer.
func TestEngineRejectingTheFirstRequestAborts(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	var completions atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			http.Error(w, `{"error":{"message":"not allowed"}}`, http.StatusUnauthorized)
			return
		}
		if r.URL.Path != "/v1/chat/completions" && r.URL.Path != "/v1/completions" {
			http.NotFound(w, r) // no /metrics, no /health
			return
		}
		completions.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":{"message":"invalid API key: sk-…abc","type":"auth"}}`)
	}))
	t.Cleanup(srv.Close)
	out := t.TempDir()
	// 100 requests at 50 a second: two seconds of sending if nothing
	// stopped it.
	r := lmbench(t, nil, "run", "--engine-url", srv.URL, "--workload", "random-prefill", "--model", "m",
		"--rp-num-requests", "100", "--rp-rate", "50", "--rp-request-length", "20", "--tokens-per-gb-kvcache", "1000",
		"--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 1 || !strings.Contains(r.stderr, "lmbench: run aborted: the engine rejected request") ||
		!strings.Contains(r.stderr, "HTTP 401") || !strings.Contains(r.stderr, "invalid API key") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	recs := readJournal(t, filepath.Join(out, record.JournalName)).Records
	if n := completions.Load(); n >= 100 || int(n) != len(recs) {
		t.Errorf("the engine got %d requests, the journal has %d (of 100 planned)", n, len(recs))
	}
	if run := summaryRunBlock(t, out); run["status"] != "aborted" || !strings.Contains(fmt.Sprint(run["reason"]), "HTTP 401") {
		t.Errorf("summary run block %v", run)
	}
}

// --export-config keeps the limits the user set (and only those), and a
// run from the file resolves them the same way.
func TestExportConfigKeepsLimits(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.json")
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload", "random-prefill", "--tokens-per-gb-kvcache", "1000",
		"--idle-timeout", "5m", "--abort-after-failures", "7", "--allow-warmup-failures", "--export-config", a)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	r = lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--config", a, "--export-config", b)
	if r.code != 0 {
		t.Fatalf("replay: exit %d\n%s", r.code, r.stderr)
	}
	got := readJSONFile(t, b)
	want := map[string]any{"idle_timeout": "5m0s", "abort_after_failures": 7.0, "allow_warmup_failures": true}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("exported %s = %v, want %v", k, got[k], v)
		}
	}
	for _, k := range []string{"connect_timeout", "first_token_timeout", "max_connections", "health_interval"} {
		if _, ok := got[k]; ok {
			t.Errorf("exported %s, which was left at its default", k)
		}
	}
}
