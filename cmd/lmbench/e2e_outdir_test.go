package main

// End-to-end: no run ever lands on another's files. Two runs into the
// default location leave two complete runs; a directory that holds a run
// is refused before any request unless --overwrite.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/record"
)

// dirFiles reads every file of dir, by name.
func dirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func TestRunsNeverOverwriteEachOther(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	work := t.TempDir()
	args := []string{"run", "--engine-url", eng.srv.URL, "--workload", "random-prefill", "--rp-num-requests", "2",
		"--rp-request-length", "10", "--tokens-per-gb-kvcache", "1000", "--no-interactive", "-q", "--json"}
	var dirs []string
	for i := range 2 {
		r := lmbenchIn(t, work, nil, args...)
		if r.code != exitOK {
			t.Fatalf("run %d: exit %d\n%s", i+1, r.code, r.stderr)
		}
		latest, err := os.Readlink(filepath.Join(work, "lmbench-results", "latest"))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join("lmbench-results", latest)
		if !strings.Contains(r.stdout, "Files: "+dir+" (also "+filepath.Join("lmbench-results", "latest")+")") {
			t.Errorf("run %d's output does not say where its files are (%s):\n%s", i+1, dir, r.stdout)
		}
		dirs = append(dirs, dir)
	}
	if dirs[0] == dirs[1] {
		t.Fatalf("both runs went to %s", dirs[0])
	}
	for _, d := range dirs {
		files := dirFiles(t, filepath.Join(work, d))
		for _, name := range []string{record.JournalName, "bench_results.csv", "bench_summary.json"} {
			if files[name] == "" {
				t.Errorf("%s has no %s: %v", d, name, files)
			}
		}
		if !strings.Contains(d, "-random-prefill") {
			t.Errorf("directory %s does not name the workload", d)
		}
	}

	// The first run's directory, given: refused before any request, untouched.
	first := filepath.Join(work, dirs[0])
	before := dirFiles(t, first)
	sent := len(eng.requests())
	r := lmbenchIn(t, work, nil, append(args, "--output-dir", dirs[0], "--rp-num-requests", "3")...)
	if r.code != exitFailed || !strings.Contains(r.stderr, "holds a run") || !strings.Contains(r.stderr, "--overwrite") {
		t.Fatalf("into a run's directory: exit %d, want 1 naming --overwrite\n%s", r.code, r.stderr)
	}
	if n := len(eng.requests()) - sent; n != 0 {
		t.Errorf("the refused run sent %d requests", n)
	}
	if diff := cmp.Diff(before, dirFiles(t, first)); diff != "" {
		t.Errorf("the refused run changed the old one (-before +after):\n%s", diff)
	}

	// With --overwrite, without --json: the old summary goes too.
	noJSON := append(args[:len(args)-1:len(args)-1], "--output-dir", dirs[0], "--rp-num-requests", "3", "--overwrite")
	if r := lmbenchIn(t, work, nil, noJSON...); r.code != exitOK {
		t.Fatalf("--overwrite: exit %d\n%s", r.code, r.stderr)
	}
	after := dirFiles(t, first)
	if _, ok := after["bench_summary.json"]; ok {
		t.Errorf("--overwrite left the old run's bench_summary.json")
	}
	if rows := readCSV(t, filepath.Join(first, "bench_results.csv")); len(rows) != 4 {
		t.Errorf("the CSV has %d rows, want header + the new run's 3", len(rows))
	}
}

// bench_summary.json's config holds the workload's options as the
// workload resolved them, as docs/plugins.md says, beside lmbench's own.
func TestSummaryConfigHoldsTheWorkloadsOptions(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	out := filepath.Join(t.TempDir(), "run")
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload", "random-prefill", "--rp-num-requests", "2",
		"--rp-request-length", "10", "--tokens-per-gb-kvcache", "1000", "--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	cfg, _ := readJSONFile(t, filepath.Join(out, record.SummaryName))["config"].(map[string]any)
	if cfg["rp_num_requests"] != 2.0 || cfg["rp_request_length"] != 10.0 {
		t.Errorf("summary config %v: want rp_num_requests 2 and rp_request_length 10", cfg)
	}
	if _, ok := cfg["tokens_per_gb_kvcache"]; !ok {
		t.Errorf("summary config %v lost lmbench's own keys", cfg)
	}
}
