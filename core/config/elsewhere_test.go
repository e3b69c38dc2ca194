package config

import (
	"strings"
	"testing"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// testElsewhere is what two plugins the run does not use declare.
func testElsewhere() *Elsewhere {
	e := NewElsewhere()
	e.AddPlugin("workload", "multi-round-chat", "mrc", []protocol.OptionSpec{
		{Name: "qps", Type: protocol.OptionFloat, Default: option.Value(1.0)},
		{Name: "num-users", Type: protocol.OptionInt},
	})
	e.AddPlugin("exporter", "parquet", "parquet", []protocol.OptionSpec{
		{Name: "compression", Type: protocol.OptionEnum, Enum: []string{"zstd", "none"}},
	})
	return e
}

// Keys and variables of plugins not in use are ignored and named with
// their plugin; values are not type-checked; the selected plugin's and
// lmbench's own still are; a typo stays an error.
func TestKeysOfOtherPluginsAreIgnored(t *testing.T) {
	r := testRegistry(t)
	file := writeFile(t, "shared.json", `{"ldqa_document_length": 7, "mrc_qps": "not a number", "mrc_num_users": 3, "parquet_compression": "zstd"}`)
	calls := 0
	v, err := r.Load(Sources{File: file, Environ: []string{"LMBENCH_MRC_QPS=fast", "LMBENCH_SEED=9", "LMBENCH_NOPE=1"},
		Elsewhere: func() *Elsewhere { calls++; return testElsewhere() }})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("Elsewhere called %d times, want once", calls)
	}
	if v.Int("ldqa_document_length") != 7 || v.Int("seed") != 9 {
		t.Errorf("ldqa_document_length %v seed %v", v.Get("ldqa_document_length"), v.Get("seed"))
	}
	if v.Has("mrc_qps") || v.Has("mrc_num_users") {
		t.Errorf("another plugin's value was loaded: %v %v", v.Get("mrc_qps"), v.Get("mrc_num_users"))
	}
	want := []Ignored{
		{Name: "mrc_num_users", Owner: Owner{"workload", "multi-round-chat"}},
		{Name: "mrc_qps", Owner: Owner{"workload", "multi-round-chat"}},
		{Name: "parquet_compression", Owner: Owner{"exporter", "parquet"}},
		{Name: "LMBENCH_MRC_QPS", Env: true, Owner: Owner{"workload", "multi-round-chat"}},
	}
	if len(v.Ignored) != len(want) {
		t.Fatalf("ignored %+v, want %+v", v.Ignored, want)
	}
	for i := range want {
		if v.Ignored[i] != want[i] {
			t.Errorf("ignored[%d] = %+v, want %+v", i, v.Ignored[i], want[i])
		}
	}
	if len(v.UnknownEnv) != 1 || v.UnknownEnv[0] != "LMBENCH_NOPE" {
		t.Errorf("unknown env %v, want [LMBENCH_NOPE]", v.UnknownEnv)
	}
}

func TestTypoIsStillAnErrorWithOtherPluginsKnown(t *testing.T) {
	r := testRegistry(t)
	tests := map[string]struct{ body, want string }{
		"typo of the selected plugin": {`{"ldqa_documnet_length": 5}`, `unknown key "ldqa_documnet_length" (did you mean "ldqa_document_length"?)`},
		"typo of another plugin":      {`{"mrc_qpss": 5}`, `unknown key "mrc_qpss" (did you mean "mrc_qps", an option of workload multi-round-chat?)`},
		"nobody's key":                {`{"zzzzzzzzzzz": 5}`, `unknown key "zzzzzzzzzzz" (expected one of: `},
		"selected plugin still typed": {`{"ldqa_document_length": "many", "mrc_qps": 1}`, `key "ldqa_document_length": expected an integer, got "many"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			v, err := r.Load(Sources{File: writeFile(t, "c.json", tc.body), Environ: []string{}, Elsewhere: testElsewhere})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			if strings.Contains(tc.body, "mrc_qps\"") && (len(v.Ignored) != 1 || v.Ignored[0].Name != "mrc_qps") {
				t.Errorf("ignored %+v, want mrc_qps", v.Ignored)
			}
		})
	}
}

// Other plugins are only looked up when something is unknown: a clean
// configuration never launches them.
func TestElsewhereOnlyAskedForUnknownKeys(t *testing.T) {
	r := testRegistry(t)
	file := writeFile(t, "ok.json", `{"ldqa_document_length": 7, "export_json": true}`)
	for _, partial := range []bool{false, true} {
		_, err := r.Load(Sources{File: file, Environ: []string{"LMBENCH_SEED=1", "LMBENCH_PLUGIN_PATH=/x"}, Partial: partial,
			Elsewhere: func() *Elsewhere { t.Fatal("Elsewhere called for a configuration with no unknown key"); return nil }})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Partial passes ignore unknown keys without asking.
	file = writeFile(t, "other.json", `{"mrc_qps": 1}`)
	if _, err := r.Load(Sources{File: file, Environ: []string{"LMBENCH_MRC_QPS=2"}, Partial: true,
		Elsewhere: func() *Elsewhere { t.Fatal("Elsewhere called in a partial pass"); return nil }}); err != nil {
		t.Fatal(err)
	}
	// A nil set (no other plugin found) keeps today's errors.
	_, err := r.Load(Sources{File: file, Environ: []string{}, Elsewhere: func() *Elsewhere { return nil }})
	if err == nil || !strings.Contains(err.Error(), `unknown key "mrc_qps"`) {
		t.Errorf("error %v", err)
	}
}
