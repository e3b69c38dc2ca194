package main

// End-to-end tests of how the host finds, starts and talks to plugins:
// naming the workload twice, plugins of the wrong kind, exporting and
// replaying a run of a workload given by path, output a plugin prints
// outside its logger, LMBENCH_PLUGIN_PATH, and re-exporting a journal of
// the previous release. The real binaries against the fake engine of
// e2e_test.go (not lmbench's built-in one).

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/record"
)

// lmbenchIn runs the built binary in dir (where its default output
// directory, lmbench-results/, goes).
func lmbenchIn(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "lmbench"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := exitCode(cmd.Run())
	if code < 0 {
		t.Fatalf("lmbench %q did not run", args)
	}
	return result{code, out.String(), errb.String()}
}

// buildPlugin builds the test plugin in ./testdata/<pkg> to path.
func buildPlugin(t *testing.T, pkg, path string) string {
	t.Helper()
	if out, err := exec.Command("go", "build", "-o", path, "./testdata/"+pkg).CombinedOutput(); err != nil {
		t.Fatalf("building testdata/%s: %v\n%s", pkg, err, out)
	}
	return path
}

// warnings returns the host's JSON log lines at warn level.
func warnings(stderr string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(stderr, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["level"] == "warn" {
			out = append(out, m)
		}
	}
	return out
}

// A workload name and a workload plugin, from any two sources, are a
// usage error naming both; nothing is started or sent.
func TestWorkloadAndWorkloadPluginConflict(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	plugin := filepath.Join(binDir, "lmbench-workload-random-prefill")
	both := writeTemp(t, "both.json", `{"workload": "long-doc-qa", "workload_plugin": "`+plugin+`"}`)
	name := writeTemp(t, "name.yaml", "workload: long-doc-qa\n")
	base := []string{"run", "--engine-url", eng.srv.URL, "--tokens-per-gb-kvcache", "1000", "--no-interactive", "-q",
		"--output-dir", t.TempDir()}
	tests := map[string]struct {
		env  []string
		args []string
		want string
	}{
		"two flags": {nil, []string{"--workload", "long-doc-qa", "--workload-plugin", plugin},
			`--workload and --workload-plugin both name the workload ("long-doc-qa" and "` + plugin + `"): give one`},
		"flag and variable": {[]string{"LMBENCH_WORKLOAD_PLUGIN=" + plugin}, []string{"--workload", "long-doc-qa"},
			`--workload and LMBENCH_WORKLOAD_PLUGIN both name the workload ("long-doc-qa" and "` + plugin + `"): give one`},
		"two keys of one file": {nil, []string{"--config", both},
			`key "workload" in ` + both + ` and key "workload_plugin" in ` + both + ` both name the workload`},
		"file and flag": {nil, []string{"--config", name, "--workload-plugin", plugin},
			`key "workload" in ` + name + ` and --workload-plugin both name the workload ("long-doc-qa" and "` + plugin + `")`},
	}
	for label, tc := range tests {
		t.Run(label, func(t *testing.T) {
			t.Parallel()
			r := lmbench(t, tc.env, append(base, tc.args...)...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, want %d with %q; stderr:\n%s", r.code, exitUsage, tc.want, r.stderr)
			}
		})
	}
	if n := len(eng.requests()); n != 0 {
		t.Errorf("the engine got %d requests", n)
	}
}

// A plugin of the other kind is refused in plain words, telling the flag
// to give it with. It is told by what it answers, not by its file name.
func TestPluginOfTheWrongKind(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	dir := t.TempDir()
	exporter := filepath.Join(dir, "some-exporter")
	copyFile(t, filepath.Join(binDir, "lmbench-exporter-csv"), exporter)
	workload := filepath.Join(dir, "some-workload")
	copyFile(t, filepath.Join(binDir, "lmbench-workload-random-prefill"), workload)
	base := []string{"run", "--engine-url", eng.srv.URL, "--tokens-per-gb-kvcache", "1000", "--no-interactive", "-q",
		"--output-dir", t.TempDir()}
	tests := map[string]struct {
		env  []string
		args []string
		want string
	}{
		"exporter as --workload-plugin": {nil, []string{"--workload-plugin", exporter},
			"--workload-plugin: " + exporter + " is an lmbench exporter plugin, not a workload (give it with --exporter-plugin)"},
		"exporter as LMBENCH_WORKLOAD_PLUGIN": {[]string{"LMBENCH_WORKLOAD_PLUGIN=" + exporter}, nil,
			"LMBENCH_WORKLOAD_PLUGIN: " + exporter + " is an lmbench exporter plugin, not a workload (give it with --exporter-plugin)"},
		"bundled exporter as --workload-plugin": {nil, []string{"--workload-plugin", filepath.Join(binDir, "lmbench-exporter-parquet")},
			filepath.Join(binDir, "lmbench-exporter-parquet") + " is an lmbench exporter plugin, not a workload (give it with --exporter-plugin)"},
		"workload as --exporter-plugin": {nil, []string{"--workload", "random-prefill", "--exporter-plugin", workload},
			workload + " is an lmbench workload plugin, not an exporter (give it with --workload-plugin)"},
	}
	for label, tc := range tests {
		t.Run(label, func(t *testing.T) {
			t.Parallel()
			r := lmbench(t, tc.env, append(base, tc.args...)...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, want %d with %q; stderr:\n%s", r.code, exitUsage, tc.want, r.stderr)
			}
			// The plain words, not the RPC error they replace.
			if strings.Contains(r.stderr, "Unimplemented") || strings.Contains(r.stderr, "rpc error") {
				t.Errorf("stderr shows the RPC error:\n%s", r.stderr)
			}
		})
	}
	if n := len(eng.requests()); n != 0 {
		t.Errorf("the engine got %d requests", n)
	}
}

// --export-config of a run whose workload was given by path writes the
// plugin's absolute path as workload_plugin (no workload key), and the
// printed replay command runs that plugin when run as printed; the file
// alone replays it from anywhere.
func TestExportConfigWorkloadPluginReplays(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	if _, err := exec.LookPath("sh"); err != nil {
		t.Fatalf("no sh to run the replay command with: %v", err)
	}
	eng := newFakeEngine(t)
	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Not named lmbench-workload-*, and given relative to the working directory.
	abs := filepath.Join(work, "plugins", "myprefill")
	copyFile(t, filepath.Join(binDir, "lmbench-workload-random-prefill"), abs)
	r := lmbenchIn(t, work, nil, "run", "--engine-url", eng.srv.URL, "--workload-plugin", "plugins/myprefill",
		"--rp-num-requests", "3", "--rp-request-length", "10", "--tokens-per-gb-kvcache", "1000", "--export-config", "run.json",
		"--json", "--exporter", "parquet", "--parquet-file", "replay.parquet")
	if r.code != exitOK {
		t.Fatalf("export: exit %d\n%s", r.code, r.stderr)
	}
	if n := len(eng.requests()); n != 0 {
		t.Fatalf("--export-config sent %d requests", n)
	}
	got := readJSONFile(t, filepath.Join(work, "run.json"))
	if got["workload_plugin"] != abs {
		t.Errorf("exported workload_plugin = %v, want the absolute path %s", got["workload_plugin"], abs)
	}
	if w, ok := got["workload"]; ok {
		t.Errorf("exported workload = %v as well: the file would name the workload twice", w)
	}
	if got["json"] != true || got["parquet_file"] != "replay.parquet" {
		t.Errorf("exported json = %v, parquet_file = %v: the replay would not write the same files", got["json"], got["parquet_file"])
	}
	if got["rp_num_requests"] != 3.0 || got["model"] != "fake-model" {
		t.Errorf("exported %v", got)
	}

	var replay string
	for _, line := range strings.Split(r.stdout, "\n") {
		if rest, ok := strings.CutPrefix(line, "Replay with: "); ok {
			replay = rest
		}
	}
	// The file names the workload: the command repeats only what a file
	// cannot hold, the exporters.
	want := "lmbench run --engine-url " + eng.srv.URL + " --exporter parquet --config run.json"
	if replay != want {
		t.Fatalf("replay command %q, want %q\nstdout:\n%s", replay, want, r.stdout)
	}
	sh := exec.Command("sh", "-c", replay)
	sh.Dir = work
	sh.Env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := sh.CombinedOutput()
	if err != nil {
		t.Fatalf("replay %q: %v\n%s", replay, err, out)
	}
	if n := len(eng.requests()); n != 3 {
		t.Errorf("the replay sent %d requests, want the file's 3", n)
	}
	// Each run writes into a directory of its own, lmbench-results/latest.
	latest := filepath.Join(work, "lmbench-results", "latest")
	if rows := readCSV(t, filepath.Join(latest, "bench_results.csv")); len(rows) != 4 {
		t.Errorf("the replay's CSV has %d rows, want header + 3", len(rows))
	}
	for _, name := range []string{"replay.parquet", record.SummaryName} {
		if _, err := os.Stat(filepath.Join(latest, name)); err != nil {
			t.Errorf("the replay wrote no %s: %v", name, err)
		}
	}
	if run := readJournal(t, filepath.Join(latest, record.JournalName)).Run; run.Workload != "random-prefill" {
		t.Errorf("the replay ran workload %q", run.Workload)
	}

	// The file alone (its absolute workload_plugin), from another directory.
	elsewhere := t.TempDir()
	r = lmbenchIn(t, elsewhere, nil, "run", "--engine-url", eng.srv.URL, "--config", filepath.Join(work, "run.json"),
		"--exporter", "parquet", "--no-interactive", "-q")
	if r.code != exitOK {
		t.Fatalf("run from the file elsewhere: exit %d\n%s", r.code, r.stderr)
	}
	if n := len(eng.requests()); n != 6 {
		t.Errorf("the engine saw %d requests, want 3 more", n-3)
	}
	if rows := readCSV(t, filepath.Join(elsewhere, "lmbench-results", "latest", "bench_results.csv")); len(rows) != 4 {
		t.Errorf("CSV has %d rows, want header + 3", len(rows))
	}
}

// What a plugin prints on stdout or stderr after the handshake, outside
// its logger, is logged by the host as a warning naming the plugin and
// the stream; it never reaches lmbench's own stdout.
func TestPluginOutputOutsideLoggerIsLogged(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	plugin := buildPlugin(t, "chattyplugin", filepath.Join(t.TempDir(), "chatty"))
	eng := newFakeEngine(t)
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload-plugin", plugin, "--tokens-per-gb-kvcache", "1000",
		"--no-interactive", "-q", "--output-dir", out)
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if n := len(eng.requests()); n != 2 {
		t.Errorf("the engine saw %d requests, want 2", n)
	}
	for stream, line := range map[string]string{"stdout": "chatty: a line on stdout", "stderr": "chatty: a line on stderr"} {
		n := 0
		for _, w := range warnings(r.stderr) {
			if w["plugin"] == "chatty" && w["stream"] == stream && w["line"] == line &&
				strings.Contains(w["message"].(string), "printed outside its logger") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d warnings for the line the plugin printed on its %s, want 1; stderr:\n%s", n, stream, r.stderr)
		}
	}
	if strings.Contains(r.stdout, "chatty: a line") {
		t.Errorf("the plugin's output reached lmbench's stdout:\n%s", r.stdout)
	}
}

// LMBENCH_PLUGIN_PATH adds directories to search, first; the plugins next
// to the lmbench binary (the bundled csv exporter) are still found.
func TestPluginPathAddsToBundledPlugins(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	extra := t.TempDir()
	buildPlugin(t, "chattyplugin", filepath.Join(extra, "lmbench-workload-chatty"))
	env := []string{"LMBENCH_PLUGIN_PATH=" + extra}

	r := lmbench(t, env, "plugins")
	if r.code != exitOK {
		t.Fatalf("plugins: exit %d\n%s", r.code, r.stderr)
	}
	// lmbench looks next to its binary with symlinks resolved.
	bundled, err := filepath.EvalSymlinks(binDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{filepath.Join(extra, "lmbench-workload-chatty"), filepath.Join(bundled, "lmbench-exporter-csv"),
		filepath.Join(bundled, "lmbench-workload-long-doc-qa"), "Searched: " + extra + ", " + bundled + ", "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("lmbench plugins does not list %q:\n%s", want, r.stdout)
		}
	}
	// Each plugin says what it is for, on the line under it (its summary).
	for _, want := range []string{"\n            Repeated Q&A over long documents (tests KV cache reuse)\n",
		"\n            Per-request results as CSV (bench_results.csv)\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("lmbench plugins does not say %q:\n%s", want, r.stdout)
		}
	}

	// A run of the extra directory's workload by name, with the bundled
	// csv exporter (on by default).
	eng := newFakeEngine(t)
	out := t.TempDir()
	r = lmbench(t, env, "run", "--engine-url", eng.srv.URL, "--workload", "chatty", "--chatty-requests", "3",
		"--tokens-per-gb-kvcache", "1000", "--no-interactive", "-q", "--output-dir", out)
	if r.code != exitOK {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	rows := readCSV(t, filepath.Join(out, "bench_results.csv"))
	if len(rows) != 4 || rows[1][0] != "chatty_0" {
		t.Errorf("CSV rows %v, want header + chatty_0..2", rows)
	}
	// And lmbench export finds the bundled exporter the same way.
	re := t.TempDir()
	r = lmbench(t, env, "export", "--journal", filepath.Join(out, record.JournalName), "--output-dir", re)
	if r.code != exitOK {
		t.Fatalf("export: exit %d\n%s", r.code, r.stderr)
	}
	a, _ := os.ReadFile(filepath.Join(out, "bench_results.csv"))
	b, err := os.ReadFile(filepath.Join(re, "bench_results.csv"))
	if err != nil || !bytes.Equal(a, b) {
		t.Errorf("re-exported CSV (err %v) differs from the run's", err)
	}
}

// A journal written by the previous release (version 1, protobuf JSON)
// re-exports to the CSV that release wrote; an interrupted one (no
// summary) re-exports with a computed summary.
func TestReexportVersion1Journal(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	testdata, err := filepath.Abs(filepath.Join("..", "..", "core", "record", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("complete", func(t *testing.T) {
		t.Parallel()
		journal := filepath.Join(testdata, "v1-complete.jsonl")
		if c := readJournal(t, journal); c.Version != 1 || c.Summary == nil {
			t.Fatalf("%s: version %d, summary %v: not the complete version 1 journal this test is about", journal, c.Version, c.Summary)
		}
		out := t.TempDir()
		r := lmbench(t, nil, "export", "--journal", journal, "--exporter", "csv", "--exporter", "parquet", "--output-dir", out)
		if r.code != exitOK {
			t.Fatalf("export: exit %d\n%s", r.code, r.stderr)
		}
		if !strings.Contains(r.stdout, filepath.Join(out, "bench_results.csv")+" (40 rows)") {
			t.Errorf("stdout:\n%s", r.stdout)
		}
		// Every column 0.1 wrote has the same text in every row; schema
		// version 2's and 3's columns come in after cached_tokens (a
		// version 1 journal has no chunks, no finish reasons and no stated
		// lengths: 0 and empty; a request with a schedule counts as
		// scheduled explicitly).
		want := readCSV(t, filepath.Join(testdata, "v1-complete.csv"))
		got := readCSV(t, filepath.Join(out, "bench_results.csv"))
		v2 := []string{"tpot", "ttft_from_scheduled", "e2e_from_scheduled", "finish_reason", "num_chunks",
			"stated_prompt_tokens", "explicit_schedule"}
		at := slices.Index(want[0], "cached_tokens") + 1
		if wantHeader := slices.Insert(slices.Clone(want[0]), at, v2...); !slices.Equal(wantHeader, got[0]) {
			t.Fatalf("re-exported CSV header\n got  %q\n want %q", got[0], wantHeader)
		}
		if len(got) != len(want) {
			t.Fatalf("re-exported CSV has %d lines, v1-complete.csv %d", len(got), len(want))
		}
		for i := 1; i < len(got); i++ {
			if d := cmp.Diff(want[i], slices.Delete(slices.Clone(got[i]), at, at+len(v2))); d != "" {
				t.Fatalf("re-exported CSV row %d differs from v1-complete.csv in its columns (-0.1 +re-export):\n%s", i, d)
			}
			if extra := got[i][at : at+len(v2)]; extra[3] != "" || extra[4] != "0" || extra[1] == "" || extra[2] == "" ||
				extra[5] != "" || extra[6] != "True" {
				t.Errorf("row %d: version 2 and 3 columns %q; want a TTFT and E2E from scheduled, no finish reason, 0 chunks, "+
					"no stated length, an explicit schedule", i, extra)
			}
		}
		recs := readJournal(t, journal).Records
		rows, meta := readParquet(t, filepath.Join(out, "bench_results.parquet"))
		checkRowsMatchJournal(t, rows, recs)
		if meta["lmbench.run_id"] != "20261201T090303Z-10bacb4d" || meta["lmbench.interrupted"] != "false" {
			t.Errorf("metadata run_id %q interrupted %q", meta["lmbench.run_id"], meta["lmbench.interrupted"])
		}
		if w := warnings(r.stderr); len(w) != 0 {
			t.Errorf("warnings re-exporting a complete journal: %v", w)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		t.Parallel()
		journal := filepath.Join(testdata, "v1-interrupted.jsonl")
		c := readJournal(t, journal)
		if c.Version != 1 || c.Summary != nil {
			t.Fatalf("%s: version %d, summary %v: not the interrupted version 1 journal this test is about", journal, c.Version, c.Summary)
		}
		out := t.TempDir()
		r := lmbench(t, nil, "export", "--journal", journal, "--exporter", "csv", "--exporter", "parquet", "--output-dir", out)
		if r.code != exitOK {
			t.Fatalf("export: exit %d\n%s", r.code, r.stderr)
		}
		checkCSVMatchesJournal(t, filepath.Join(out, "bench_results.csv"), c.Records)
		rows, meta := readParquet(t, filepath.Join(out, "bench_results.parquet"))
		checkRowsMatchJournal(t, rows, c.Records)
		if meta["lmbench.interrupted"] != "true" {
			t.Errorf("lmbench.interrupted = %q for a journal without a summary", meta["lmbench.interrupted"])
		}
		if !strings.Contains(r.stderr, "the journal has no summary") {
			t.Errorf("no warning about the computed summary:\n%s", r.stderr)
		}
	})
}
