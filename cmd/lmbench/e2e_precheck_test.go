package main

// End to end: a plan that cannot run is refused before lmbench opens a
// single connection to the engine, even when only the workload plugin can
// tell (a limit in its Validate, a defect in its trace).

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func TestWorkloadOptionsRefusedBeforeAnyConnection(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	trace := `{"timestamp": 0, "input_length": 8, "output_length": 2}` + "\n" +
		`{"timestamp": 5, "input_length": 8}` + "\n" // line 2: no output_length
	if err := os.WriteFile(bad, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string // in the error
	}{
		{"random-prefill plan too large", []string{"--workload", "random-prefill", "--rp-num-requests", "100000000"},
			[]string{"--rp-num-requests", "100000000"}},
		{"trace with a defect", []string{"--workload", "trace-replay", "--tr-trace", bad, "--tr-block-size", "4"},
			[]string{"--tr-trace", "bad.jsonl:2", "output_length"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var conns atomic.Int64
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "not expected", http.StatusTeapot)
			}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			srv.Start()
			t.Cleanup(srv.Close)
			args := append([]string{"run", "--engine-url", srv.URL, "--tokens-per-gb-kvcache", "1000", "--kv-cache-volume", "1",
				"--no-interactive", "-q", "--output-dir", t.TempDir()}, tc.args...)
			r := lmbench(t, nil, args...)
			if r.code == 0 {
				t.Fatalf("exit 0, want a refusal\n%s", r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr does not name %q:\n%s", w, r.stderr)
				}
			}
			if n := conns.Load(); n != 0 {
				t.Errorf("the engine saw %d connections before the refusal, want 0", n)
			}
		})
	}
}
