package main

// End-to-end tests of the overhead certificate (issue 12): a run's
// summary says how much latency the client may have added, and
// `lmbench calibrate` replays a run's schedule against the zero-cost
// built-in engine.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lmbench/lmbench/core/record"
)

// overheadDoc is bench_summary.json's "overhead" object.
type overheadDoc struct {
	PhaseS        *float64                   `json:"phase_s"`
	DispatchLagMs map[string]*float64        `json:"dispatch_lag_ms"`
	SendSpreadMs  map[string]*float64        `json:"send_spread_ms"`
	LoopLagMs     map[string]*float64        `json:"loop_lag_ms"`
	CPU           map[string]*float64        `json:"cpu"`
	GCPauses      map[string]*float64        `json:"gc_pauses"`
	Verdict       map[string]json.RawMessage `json:"verdict"`
}

// shortRun is a 5-request random-prefill burst against a fake engine.
func shortRun(t *testing.T) (out string, r result) {
	t.Helper()
	eng := newFakeEngine(t)
	out = t.TempDir()
	r = lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload", "random-prefill",
		"--rp-num-requests", "5", "--rp-request-length", "40", "--tokens-per-gb-kvcache", "1000",
		"--no-interactive", "-q", "--json", "--no-csv", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	return out, r
}

func TestOverheadCertificateInTheSummary(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	out, r := shortRun(t)
	b, err := os.ReadFile(filepath.Join(out, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Overhead *overheadDoc `json:"overhead"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	o := doc.Overhead
	if o == nil {
		t.Fatalf("bench_summary.json has no overhead object:\n%s", b)
	}
	// Every measured request has a dispatch lag; the burst's five were
	// due together (one Step at the phase's start): one group.
	if c := o.DispatchLagMs["count"]; c == nil || *c != 5 {
		t.Errorf("dispatch_lag_ms.count = %v, want 5", c)
	}
	if g := o.SendSpreadMs["groups"]; g == nil || *g != 1 {
		t.Errorf("send_spread_ms.groups = %v, want 1 (the burst)", g)
	}
	for name, m := range map[string]map[string]*float64{"dispatch_lag_ms": o.DispatchLagMs, "send_spread_ms": o.SendSpreadMs} {
		for _, k := range []string{"p99", "max"} {
			if v := m[k]; v == nil || *v < 0 {
				t.Errorf("%s.%s = %v, want a figure >= 0", name, k, v)
			}
		}
	}
	for _, k := range []string{"samples", "period", "p99", "max"} {
		if _, ok := o.LoopLagMs[k]; !ok {
			t.Errorf("loop_lag_ms lacks %q", k)
		}
	}
	for _, k := range []string{"seconds", "core_percent", "machine_percent", "cpus"} {
		if v := o.CPU[k]; v == nil {
			t.Errorf("cpu.%s is null on Linux", k)
		}
	}
	for _, k := range []string{"count", "total_ms", "max_ms"} {
		if _, ok := o.GCPauses[k]; !ok {
			t.Errorf("gc_pauses lacks %q", k)
		}
	}
	var text string
	var saturated bool
	if err := json.Unmarshal(o.Verdict["text"], &text); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(o.Verdict["saturated"], &saturated); err != nil {
		t.Fatal(err)
	}
	// On a busy machine the burst's one Step can itself be late enough to
	// be named as the workload's (fault.SlowStep's sentence).
	verdictForm := regexp.MustCompile(`^(Client-added latency at most \d+\.\d\d ms at p99|WARNING: the client was saturated \(.+\): its TTFT may be inflated by up to \d+\.\d\d ms at p99 .*|WARNING: workload random-prefill took up to \d+(\.\d)? m?s to answer Step; the lag is the plugin's, not the client's: .*)$`)
	if !verdictForm.MatchString(text) || strings.HasPrefix(text, "WARNING") != saturated {
		t.Errorf("verdict text %q (saturated %v)", text, saturated)
	}
	// The terminal has the section and the same verdict (wrapped).
	if !strings.Contains(r.stdout, " Client overhead ") || !strings.Contains(r.stdout, "Dispatch lag P99 (ms):") {
		t.Errorf("stdout lacks the Client overhead section:\n%s", r.stdout)
	}
	if !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), text) {
		t.Errorf("stdout lacks the verdict %q:\n%s", text, r.stdout)
	}
}

func TestCalibrateEndToEnd(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	out, _ := shortRun(t)
	journal := filepath.Join(out, record.JournalName)
	r := lmbench(t, nil, "calibrate", "--journal", journal, "--repeat", "2")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^Requests x replays: +5 x 2$`),
		regexp.MustCompile(`(?m)^Failed requests: +0$`),
		regexp.MustCompile(`(?m)^Client-added TTFT P50 \(ms\): +\d+\.\d\d$`),
		regexp.MustCompile(`(?m)^Client-added TTFT P99 \(ms\): +\d+\.\d\d$`),
		regexp.MustCompile(`(?m)^Client-added TTFT max \(ms\): +\d+\.\d\d$`),
		regexp.MustCompile(`(?m)^Dispatch lag P50 \(ms\): +-?\d+\.\d\d$`),
		regexp.MustCompile(`(?m)^Dispatch lag P99 \(ms\): +-?\d+\.\d\d$`),
	} {
		if !want.MatchString(r.stdout) {
			t.Errorf("stdout lacks %s:\n%s", want, r.stdout)
		}
	}
}

func TestCalibrateErrors(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	dir := t.TempDir()
	warmupOnly := filepath.Join(dir, "warmup.jsonl")
	j, err := record.CreateJournal(warmupOnly, record.Run{ID: "r1", Workload: "long-doc-qa"})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append(&record.Record{RunID: "r1", Phase: record.Warmup, RequestID: "w0"}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(nil); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nope.jsonl")
	for name, tc := range map[string]struct {
		args []string
		code int
		want string
	}{
		"no journal":   {[]string{"calibrate"}, 2, "--journal: required"},
		"bad repeat":   {[]string{"calibrate", "--journal", warmupOnly, "--repeat", "0"}, 2, "--repeat: must be >= 1, got 0"},
		"stray arg":    {[]string{"calibrate", "--journal", warmupOnly, "extra"}, 2, `unexpected argument "extra"`},
		"missing file": {[]string{"calibrate", "--journal", missing}, 1, "--journal " + missing + ": open "},
		"a directory":  {[]string{"calibrate", "--journal", dir}, 1, "is a directory"},
		"no measured":  {[]string{"calibrate", "--journal", warmupOnly}, 1, "no measured requests to replay"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := lmbench(t, nil, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d (want %d), stderr lacks %q:\n%s", r.code, tc.code, tc.want, r.stderr)
			}
		})
	}
}
