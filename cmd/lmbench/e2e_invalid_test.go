package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/badworkload"
	"github.com/lmbench/lmbench/sdk/sdktest"
)

// A workload that returns an invalid request gets the same error from
// sdktest and from the real host: both run the same interpreter and
// validator. The valid request before it is still sent and measured.
func TestInvalidRequestSameErrorInSdktestAndHost(t *testing.T) {
	needBinaries(t)
	t.Parallel()
	bin := buildPlugin(t, "badplugin", filepath.Join(t.TempDir(), "lmbench-workload-bad"))
	for _, tc := range []struct{ mode, want string }{
		{"max-tokens", `measure phase: workload bad returned an invalid request: request "q1": max_tokens: must be >= 1, got -5`},
		{"empty-prompt", `measure phase: workload bad returned an invalid request: request "q1": prompt: is empty`},
		{"duplicate-id", `measure phase: workload bad returned an invalid request: request "ok": id: is not unique: an earlier request of this run has it`},
		{"unregistered", `measure phase: workload bad returned an invalid request: request "q1": messages[0].content[0]: references content "never-registered", which is not registered (or was released)`},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			tr, err := sdktest.RunE(badworkload.Definition, sdktest.Options{Options: map[string]any{"mode": tc.mode}})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("sdktest: %v\nwant %s", err, tc.want)
			}
			if len(tr.Measured()) != 1 || tr.Measured()[0].ID != "ok" {
				t.Errorf("sdktest sent %v, want the valid request only", sdktest.IDs(tr.Requests))
			}

			eng := newFakeEngine(t)
			out := t.TempDir()
			r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload-plugin", bin, "--bad-mode", tc.mode,
				"--tokens-per-gb-kvcache", "1000", "--no-interactive", "--output-dir", out)
			if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("host: exit %d, want 1 and %q in stderr:\n%s", r.code, tc.want, r.stderr)
			}
			// Said once, and the files, which were all written, are not
			// said to be incomplete.
			if n := strings.Count(r.stderr, tc.want); n != 1 || strings.Contains(r.stderr, "may be incomplete") {
				t.Errorf("host: the error printed %d times, or the files said incomplete:\n%s", n, r.stderr)
			}
			if reqs := eng.requests(); len(reqs) != 1 || !strings.Contains(promptOf(reqs[0]), "a valid question") {
				t.Errorf("the engine got %d requests, want the valid one only", len(reqs))
			}
			if rows := readCSV(t, filepath.Join(out, "bench_results.csv")); len(rows) != 2 || rows[1][0] != "ok" {
				t.Errorf("bench_results.csv: %v, want the valid request's row", rows)
			}
		})
	}
}

// A workload whose Step panics: the run is aborted naming the plugin and
// the panic, its stack shows once (in the log), and the files, all
// written, are not said to be incomplete.
func TestWorkloadPanicIsReportedOnce(t *testing.T) {
	needBinaries(t)
	t.Parallel()
	bin := buildPlugin(t, "badplugin", filepath.Join(t.TempDir(), "lmbench-workload-bad"))
	eng := newFakeEngine(t)
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload-plugin", bin, "--bad-mode", "panic",
		"--tokens-per-gb-kvcache", "1000", "--no-interactive", "-q", "--output-dir", t.TempDir())
	want := "workload plugin bad (" + bin + ") crashed or exited during Step: panic: badworkload: Step panics on purpose"
	if r.code != exitFailed || !strings.Contains(r.stderr, "lmbench: run aborted: workload failed: measure phase: step: "+want) {
		t.Fatalf("exit %d, want 1 and %q:\n%s", r.code, want, r.stderr)
	}
	if n := strings.Count(r.stderr+r.stdout, "[running]:"); n != 1 {
		t.Errorf("the stack shows %d times, want once:\n%s", n, r.stderr)
	}
	if strings.Contains(r.stderr, "lmbench: also:") || strings.Contains(r.stderr, "may be incomplete") {
		t.Errorf("the abort repeats itself or calls complete files incomplete:\n%s", r.stderr)
	}
}

// A workload whose Step takes 1.5 s makes its request go out late: the
// overhead certificate names the workload and its Step time, and does not
// call the client saturated; the Step figures are in the summary.
func TestSlowStepIsNamedNotTheClient(t *testing.T) {
	needBinaries(t)
	t.Parallel()
	bin := buildPlugin(t, "badplugin", filepath.Join(t.TempDir(), "lmbench-workload-bad"))
	eng := newFakeEngine(t)
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload-plugin", bin, "--bad-mode", "slow-step",
		"--tokens-per-gb-kvcache", "1000", "--no-interactive", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var doc struct {
		Overhead struct {
			Steps *struct {
				Workload string  `json:"workload"`
				Count    int     `json:"count"`
				Max      float64 `json:"max"`
			} `json:"steps_ms"`
			Verdict struct {
				StepSlow bool   `json:"step_slow"`
				Text     string `json:"text"`
			} `json:"verdict"`
		} `json:"overhead"`
	}
	b, err := os.ReadFile(filepath.Join(out, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	o := doc.Overhead
	if o.Steps == nil || o.Steps.Workload != "bad" || o.Steps.Count != 2 ||
		o.Steps.Max < float64(badworkload.SlowStep.Milliseconds()) {
		t.Errorf("steps_ms %+v, want bad's 2 measured Steps, the slowest at least %v", o.Steps, badworkload.SlowStep)
	}
	if !o.Verdict.StepSlow || !strings.HasPrefix(o.Verdict.Text, "WARNING: workload bad took up to ") ||
		!strings.Contains(o.Verdict.Text, "the lag is the plugin's, not the client's") ||
		strings.Contains(o.Verdict.Text, "the client was saturated") {
		t.Errorf("verdict %+v, want the slow Step named and the client not blamed", o.Verdict)
	}
	if !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), "WARNING: workload bad took up to") {
		t.Errorf("terminal lacks the verdict:\n%s", r.stdout)
	}
}
