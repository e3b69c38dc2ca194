package main

// End-to-end tests of config keys and LMBENCH_* variables that belong to
// an installed workload or exporter other than the ones selected: one
// file serves several workloads, while a typo is still an error.

import (
	"strings"
	"testing"
)

func TestOtherPluginsKeysAreIgnoredWithAWarning(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	// mrc_qps holds a value multi-round-chat would reject: a plugin that
	// is not selected does not check it.
	cfg := writeTemp(t, "shared.json", `{
  "workload": "long-doc-qa",
  "kv_cache_volume": 1,
  "tokens_per_gb_kvcache": 1000,
  "ldqa_document_length": 500,
  "ldqa_query_per_document": 1,
  "mrc_qps": "fast",
  "parquet_compression": "zstd"
}`)
	r := lmbench(t, []string{"LMBENCH_RP_NUM_REQUESTS=3"}, "run", "--engine-url", eng.srv.URL, "--config", cfg,
		"--no-interactive", "-q", "--no-csv", "--log-format", "console", "--output-dir", t.TempDir())
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, w := range []string{
		`ignoring config key "mrc_qps": it is an option of workload multi-round-chat, not of long-doc-qa`,
		`ignoring config key "parquet_compression": it is an option of exporter parquet, which this run does not use`,
		`ignoring variable LMBENCH_RP_NUM_REQUESTS: it is an option of workload random-prefill, not of long-doc-qa`,
	} {
		if n := strings.Count(r.stderr, w); n != 1 {
			t.Errorf("stderr has %q %d times, want once:\n%s", w, n, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "names no option") {
		t.Errorf("a variable of another workload was called unknown:\n%s", r.stderr)
	}
	// 1 GB × 1000 tokens/GB / 500 tokens = 2 documents: 2 warmups + 2 questions.
	if n := len(eng.requests()); n != 4 {
		t.Errorf("engine saw %d requests, want 4", n)
	}
}

func TestOtherPluginsVariableWarnsAndUnknownIsAnError(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	dir := t.TempDir()
	base := []string{"run", "--engine-url", eng.srv.URL, "--tokens-per-gb-kvcache", "1000", "--kv-cache-volume", "1",
		"--no-interactive", "-q", "--no-csv", "--log-format", "console", "--output-dir", dir}

	// The variable of another workload: warned about by name, then the run goes on.
	r := lmbench(t, []string{"LMBENCH_MRC_QPS=5"}, append(base, "--workload", "random-prefill", "--rp-num-requests", "2")...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "ignoring variable LMBENCH_MRC_QPS: it is an option of workload multi-round-chat, not of random-prefill") {
		t.Errorf("no warning for LMBENCH_MRC_QPS:\n%s", r.stderr)
	}
	if n := len(eng.requests()); n != 2 {
		t.Errorf("engine saw %d requests, want 2", n)
	}
	// A variable no plugin declares is an error naming it, with a
	// suggestion, before anything is sent.
	r = lmbench(t, []string{"LMBENCH_RP_NUM_REQUEST=2"}, append(base, "--workload", "random-prefill")...)
	if r.code != 2 || !strings.Contains(r.stderr, "LMBENCH_RP_NUM_REQUEST: no option has this variable (did you mean LMBENCH_RP_NUM_REQUESTS?)") {
		t.Errorf("unknown variable: exit %d\n%s", r.code, r.stderr)
	}
	if n := len(eng.requests()); n != 2 {
		t.Errorf("the unknown variable's run sent %d requests", n-2)
	}

	// Typos, of another workload's key or of the selected one's, are
	// still errors naming the key, with a suggestion; exit codes as before.
	tests := map[string]struct {
		body string
		want []string
	}{
		"typo of another workload's key": {`{"workload": "long-doc-qa", "mrc_qpss": 5}`,
			[]string{`unknown key "mrc_qpss"`, `did you mean "mrc_qps", an option of workload multi-round-chat?`}},
		"typo of the selected workload's key": {`{"workload": "long-doc-qa", "ldqa_documnet_length": 100, "mrc_qps": 5}`,
			[]string{`unknown key "ldqa_documnet_length"`, `did you mean "ldqa_document_length"`,
				`ignoring config key "mrc_qps": it is an option of workload multi-round-chat, not of long-doc-qa`}},
		"nobody's key": {`{"workload": "long-doc-qa", "totally_unrelated_setting": 5}`,
			[]string{`unknown key "totally_unrelated_setting"`, "expected one of:"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := writeTemp(t, "c.json", tc.body)
			r := lmbench(t, nil, append(base, "--config", cfg)...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2 (bad input)\n%s", r.code, r.stderr)
			}
			for _, w := range append(tc.want, cfg) {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
	if n := len(eng.requests()); n != 2 {
		t.Errorf("the engine got %d requests from invalid invocations", n-2)
	}
}
