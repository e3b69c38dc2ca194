package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The sweep's options are options like the others: LMBENCH_SWEEP sets
// --sweep, --export-config writes the sweep keys beside the run's, and
// replaying the file with lmbench sweep --config runs the same points.
func TestSweepOptionsFromEnvAndFile(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	out := t.TempDir()
	res := lmbench(t, []string{"LMBENCH_SWEEP=rp_rate=50,60", "LMBENCH_SWEEP_CONTINUE=true"},
		sweepArgs(out, "--rp-num-requests", "4")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	if s := readSweepSummary(t, out); s.Key != "rp_rate" || len(s.Points) != 2 {
		t.Fatalf("LMBENCH_SWEEP: key %q, %d points; want rp_rate, 2", s.Key, len(s.Points))
	}

	file := filepath.Join(t.TempDir(), "sweep.yaml")
	res = lmbench(t, nil, sweepArgs(t.TempDir(), "--rp-num-requests", "4", "--sweep", "rp_rate=50,60",
		"--sweep-min-good", "0.8", "--export-config", file)...)
	if res.code != 0 || !strings.Contains(res.stdout, "Replay with: lmbench sweep --engine-url builtin --config "+file) {
		t.Fatalf("export: exit %d\nstdout %s\nstderr %s", res.code, res.stdout, res.stderr)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sweep: rp_rate=50,60", "sweep_min_good: 0.8", "sweep_search_steps: 3", "rp_num_requests: 4"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("exported file lacks %q:\n%s", want, b)
		}
	}
	replayed := t.TempDir()
	res = lmbench(t, nil, "sweep", "--engine-url", "builtin", "--config", file, "-q", "--output-dir", replayed)
	if res.code != 0 {
		t.Fatalf("replay: exit %d\n%s", res.code, res.stderr)
	}
	if s := readSweepSummary(t, replayed); s.Key != "rp_rate" || len(s.Values) != 2 || s.MinGood != 0.8 {
		t.Errorf("replayed sweep: key %q, values %v, min good %v; want rp_rate, [50 60], 0.8", s.Key, s.Values, s.MinGood)
	}
}

// lmbench run refuses the sweep's flags before anything is sent.
func TestRunRefusesSweepFlags(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	out := t.TempDir()
	res := lmbench(t, nil, "run", "--engine-url", "builtin", "--workload", "random-prefill", "--tokens-per-gb-kvcache", "1000",
		"--no-interactive", "-q", "--output-dir", out, "--sweep", "rp_rate=1,2")
	if res.code != 2 || !strings.Contains(res.stderr, "--sweep: lmbench sweep's options; lmbench run runs one point") {
		t.Errorf("exit %d, stderr %q; want 2 and the refusal", res.code, res.stderr)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("wrote %d entries to the output directory", len(entries))
	}
}
