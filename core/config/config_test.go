package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
)

func f64(x float64) *float64 { return &x }

// testRegistry has two host options and a plugin with prefix "ldqa".
func testRegistry(t *testing.T) *Registry {
	t.Helper()
	r := NewRegistry()
	for _, o := range []Option{
		{Key: "seed", Type: protocol.OptionInt, Default: int64(42)},
		{Key: "kv_cache_volume", Type: protocol.OptionFloat, Default: 100.0},
		{Key: "json", Type: protocol.OptionBool, Default: false, Aliases: []string{"export_json"}},
		{Key: "model", Type: protocol.OptionString},
		{Key: "drain_timeout", Type: protocol.OptionDuration, Default: 30 * time.Second},
	} {
		if _, err := r.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	_, err := r.AddPlugin("long-doc-qa", "ldqa", []protocol.OptionSpec{
		{Name: "document-length", Type: protocol.OptionInt, Default: option.Value(int64(10000)), Min: f64(1)},
		{Name: "query-per-document", Type: protocol.OptionInt, Default: option.Value(int64(2))},
		{Name: "shuffle-policy", Type: protocol.OptionEnum, Default: option.Value("random"), Enum: []string{"random", "tile"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func flags(t *testing.T, r *Registry, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	r.RegisterFlags(fs, nil)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestRegistryNames(t *testing.T) {
	r := testRegistry(t)
	o, ok := r.byKey["ldqa_document_length"]
	if !ok || o.Flag != "ldqa-document-length" || o.Env != "LMBENCH_LDQA_DOCUMENT_LENGTH" || o.Owner != "long-doc-qa" || o.Default != int64(10000) {
		t.Fatalf("option %+v", o)
	}
	if a := r.byKey["export_json"]; a == nil || a.Key != "json" {
		t.Errorf("alias export_json → %v", a)
	}
}

func TestDuplicatePrefixNamesBothPlugins(t *testing.T) {
	r := testRegistry(t)
	_, err := r.AddPlugin("my-qa", "ldqa", nil)
	if err == nil || !strings.Contains(err.Error(), "long-doc-qa") || !strings.Contains(err.Error(), "my-qa") || !strings.Contains(err.Error(), "--ldqa-") {
		t.Fatalf("err = %v", err)
	}
}

func TestPluginOptionClashingWithHostOption(t *testing.T) {
	r := testRegistry(t)
	_, err := r.AddPlugin("odd", "kv", []protocol.OptionSpec{{Name: "cache-volume", Type: protocol.OptionFloat}})
	if err == nil || !strings.Contains(err.Error(), "kv_cache_volume") || !strings.Contains(err.Error(), "plugin odd") {
		t.Fatalf("err = %v", err)
	}
}

func TestDefaultsOnly(t *testing.T) {
	v, err := testRegistry(t).Load(Sources{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if v.Int("seed") != 42 || v.Int("ldqa_document_length") != 10000 || v.Has("model") || v.UserSet("seed") {
		t.Errorf("seed %d doc %d model? %v", v.Int("seed"), v.Int("ldqa_document_length"), v.Has("model"))
	}
	if v.src["seed"] != LayerDefault || v.src["ldqa_document_length"] != LayerPluginDefault {
		t.Errorf("sources %v %v", v.src["seed"], v.src["ldqa_document_length"])
	}
}

// Each layer beats the one below it, key by key.
func TestLayerPrecedence(t *testing.T) {
	r := testRegistry(t)
	file := writeFile(t, "run.json", `{"seed": 1, "ldqa_document_length": 2000, "ldqa_query_per_document": 5, "kv_cache_volume": 7}`)
	env := []string{"LMBENCH_SEED=2", "LMBENCH_LDQA_QUERY_PER_DOCUMENT=6", "PATH=/bin"}
	fs := flags(t, r, "--seed", "3")
	v, err := r.Load(Sources{File: file, Environ: env, Flags: fs})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		key  string
		want any
		l    Layer
	}{
		{"seed", int64(3), LayerFlag},                    // flag beats env and file
		{"ldqa_query_per_document", int64(6), LayerEnv},  // env beats file
		{"ldqa_document_length", int64(2000), LayerFile}, // file beats plugin default
		{"kv_cache_volume", 7.0, LayerFile},              // file beats host default (int in JSON → float)
		{"ldqa_shuffle_policy", "random", LayerPluginDefault},
		{"drain_timeout", 30 * time.Second, LayerDefault},
	}
	for _, c := range checks {
		if got := v.Get(c.key); got != c.want || v.src[c.key] != c.l {
			t.Errorf("%s = %v (%T) from %v, want %v from %v", c.key, got, got, v.src[c.key], c.want, c.l)
		}
	}
	// An unchanged flag's default never overrides a file value.
	if v.Float("kv_cache_volume") != 7 {
		t.Error("flag default overrode the file")
	}
}

// A flag equal to the default still beats the file (the original's Q2).
func TestFlagEqualToDefaultBeatsFile(t *testing.T) {
	r := testRegistry(t)
	file := writeFile(t, "run.json", `{"seed": 7, "kv_cache_volume": 5.0}`)
	v, err := r.Load(Sources{File: file, Environ: []string{}, Flags: flags(t, r, "--seed", "42", "--kv-cache-volume", "100")})
	if err != nil {
		t.Fatal(err)
	}
	if v.Int("seed") != 42 || v.Float("kv_cache_volume") != 100 {
		t.Errorf("seed %d kv %v", v.Int("seed"), v.Float("kv_cache_volume"))
	}
}

func TestYAMLAndTOMLFiles(t *testing.T) {
	r := testRegistry(t)
	for name, body := range map[string]string{
		"run.yaml": "seed: 9\nldqa_shuffle_policy: tile\nkv_cache_volume: 1\ndrain_timeout: 5s\njson: true\n",
		"run.yml":  "seed: 9\nldqa_shuffle_policy: tile\nkv_cache_volume: 1.0\ndrain_timeout: 5\nexport_json: true\n",
		"run.toml": "seed = 9\nldqa_shuffle_policy = \"tile\"\nkv_cache_volume = 1\ndrain_timeout = \"5s\"\njson = true\n",
	} {
		v, err := r.Load(Sources{File: writeFile(t, name, body), Environ: []string{}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v.Int("seed") != 9 || v.String("ldqa_shuffle_policy") != "tile" || v.Float("kv_cache_volume") != 1 ||
			v.Duration("drain_timeout") != 5*time.Second || !v.Bool("json") {
			t.Errorf("%s: seed %v policy %v kv %v drain %v json %v", name, v.Get("seed"), v.Get("ldqa_shuffle_policy"),
				v.Get("kv_cache_volume"), v.Get("drain_timeout"), v.Get("json"))
		}
	}
}

func TestErrorsNameTheSourceValueAndExpectation(t *testing.T) {
	r := testRegistry(t)
	cases := map[string]struct {
		src  Sources
		want []string
	}{
		"typo": {Sources{File: writeFile(t, "a.json", `{"ldqa_documnet_length": 5}`)},
			[]string{"a.json", `unknown key "ldqa_documnet_length"`, `did you mean "ldqa_document_length"`}},
		"wrong type in file": {Sources{File: writeFile(t, "b.json", `{"seed": "abc"}`)},
			[]string{"b.json", `key "seed"`, `expected an integer, got "abc"`}},
		"fraction for an int": {Sources{File: writeFile(t, "c.yaml", "ldqa_document_length: 2.5\n")},
			[]string{`key "ldqa_document_length"`, "expected an integer, got 2.5"}},
		"list for a string": {Sources{File: writeFile(t, "f.yaml", "model: [a, b]\n")},
			[]string{`key "model"`, `expected a string, got a list ["a","b"]`}},
		"bad enum in env": {Sources{Environ: []string{"LMBENCH_LDQA_SHUFFLE_POLICY=zigzag"}},
			[]string{"LMBENCH_LDQA_SHUFFLE_POLICY", "expected one of random, tile", `got "zigzag"`}},
		"bad float in env": {Sources{Environ: []string{"LMBENCH_KV_CACHE_VOLUME=lots"}},
			[]string{"LMBENCH_KV_CACHE_VOLUME", `expected a number, got "lots"`}},
		"unreadable": {Sources{File: filepath.Join(t.TempDir(), "missing.json")},
			[]string{"--config", "missing.json", "cannot read", "no such file"}},
		"not JSON":     {Sources{File: writeFile(t, "d.json", `{"seed": `)}, []string{"--config", "d.json", "not a valid JSON"}},
		"unknown type": {Sources{File: writeFile(t, "e.ini", "seed=1")}, []string{"e.ini", `".ini"`, "expected .json, .yaml, .yml or .toml"}},
		"bad answer":   {Sources{Answers: map[string]string{"seed": "x"}}, []string{"--seed", `expected an integer, got "x"`}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if c.src.Environ == nil {
				c.src.Environ = []string{}
			}
			_, err := r.Load(c.src)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestFlagParseErrorNamesExpectation(t *testing.T) {
	r := testRegistry(t)
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.SetOutput(&strings.Builder{})
	r.RegisterFlags(fs, nil)
	err := fs.Parse([]string{"--kv-cache-volume", "abc"})
	if err == nil || !strings.Contains(err.Error(), "--kv-cache-volume") || !strings.Contains(err.Error(), `expected a number, got "abc"`) {
		t.Fatalf("err = %v", err)
	}
	if err := fs.Parse([]string{"--json"}); err != nil {
		t.Fatalf("bool flag without a value: %v", err)
	}
}

func TestPartialIgnoresUnknownKeysAndEnv(t *testing.T) {
	r := NewRegistry()
	r.Add(Option{Key: "workload"})
	file := writeFile(t, "run.json", `{"workload": "long-doc-qa", "ldqa_document_length": 5}`)
	v, err := r.Load(Sources{File: file, Environ: []string{"LMBENCH_LDQA_X=1"}, Partial: true})
	if err != nil || v.String("workload") != "long-doc-qa" || len(v.UnknownEnv) != 0 {
		t.Fatalf("v %v err %v unknown env %v", v.Get("workload"), err, v.UnknownEnv)
	}
	v, _ = r.Load(Sources{Environ: []string{"LMBENCH_LDQA_X=1", "LMBENCH_PLUGIN_PATH=/x"}})
	if len(v.UnknownEnv) != 1 || v.UnknownEnv[0] != "LMBENCH_LDQA_X" {
		t.Errorf("unknown env %v", v.UnknownEnv)
	}
}

func TestFormAnswersBeatFlags(t *testing.T) {
	r := testRegistry(t)
	v, err := r.Load(Sources{Environ: []string{}, Flags: flags(t, r, "--seed", "3"), Answers: map[string]string{"seed": "4", "model": ""}})
	if err != nil {
		t.Fatal(err)
	}
	if v.Int("seed") != 4 || v.src["seed"] != LayerForm || v.Has("model") {
		t.Errorf("seed %d from %v, model %v", v.Int("seed"), v.src["seed"], v.Get("model"))
	}
}

func TestExportRoundTrip(t *testing.T) {
	r := testRegistry(t)
	entries := []Entry{{"model", "m"}, {"kv_cache_volume", 100.0}, {"seed", int64(42)}, {"ldqa_shuffle_policy", "tile"}, {"drain_timeout", 5 * time.Second}}
	for _, name := range []string{"out.json", "out.yaml", "out.toml"} {
		p := filepath.Join(t.TempDir(), name)
		if err := Write(p, entries); err != nil {
			t.Fatal(err)
		}
		v, err := r.Load(Sources{File: p, Environ: []string{}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, e := range entries {
			if got := v.Get(e.Key); got != e.Value {
				t.Errorf("%s: %s = %v (%T), want %v", name, e.Key, got, got, e.Value)
			}
		}
	}
	b, _ := Marshal("x.json", entries[:3])
	if want := "{\n  \"model\": \"m\",\n  \"kv_cache_volume\": 100.0,\n  \"seed\": 42\n}\n"; string(b) != want {
		t.Errorf("JSON export:\n%s\nwant:\n%s", b, want)
	}
}

func TestToleratedKeys(t *testing.T) {
	r := testRegistry(t)
	r.Tolerate("ignore_eos", false)
	r.Tolerate("ldqa_max_output_length", 128)
	r.Tolerate("has_lmcache", nil)
	ok := writeFile(t, "later.json", `{"seed": 3, "ignore_eos": false, "ldqa_max_output_length": 128, "has_lmcache": true}`)
	if v, err := r.Load(Sources{File: ok, Environ: []string{}}); err != nil || v.Int("seed") != 3 {
		t.Fatalf("err %v", err)
	}
	bad := writeFile(t, "eos.json", `{"ignore_eos": true, "ldqa_max_output_length": 64}`)
	_, err := r.Load(Sources{File: bad, Environ: []string{}})
	for _, w := range []string{`key "ignore_eos": only false is supported`, "got true", `key "ldqa_max_output_length": only 128 is supported`, "got 64"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v lacks %q", err, w)
		}
	}
}

// What a plugin receives: the protocol's value types, a duration as
// nanoseconds; anything else is no value.
func TestOptionValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want any
	}{
		{"tile", "tile"},
		{true, true},
		{int64(7), int64(7)},
		{2.5, 2.5},
		{90 * time.Second, int64(90 * time.Second)},
		{nil, nil},
		{7, nil}, // registry values are never plain ints
		{[]string{"a"}, nil},
	}
	for _, tt := range tests {
		if got := OptionValue(tt.in); got != tt.want {
			t.Errorf("OptionValue(%#v) = %#v (%T), want %#v (%T)", tt.in, got, got, tt.want, tt.want)
		}
	}
}

// A plugin's schema defaults arrive as protocol values: a duration's
// nanoseconds become a time.Duration, an enum default outside its values
// is an error naming the option.
func TestPluginSchemaDefaults(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	opts, err := r.AddPlugin("multi-round-chat", "mrc", []protocol.OptionSpec{
		{Name: "time", Type: protocol.OptionDuration, Default: int64(90 * time.Second), Min: f64(1), Max: f64(3600), Help: "h", Label: "Run time", Group: "g", Advanced: true},
		{Name: "qps", Type: protocol.OptionFloat, Default: 1.5},
		{Name: "users", Type: protocol.OptionInt},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(opts) != 3 {
		t.Fatalf("%d options, want 3", len(opts))
	}
	o := opts[0]
	if o.Key != "mrc_time" || o.Flag != "mrc-time" || o.Env != "LMBENCH_MRC_TIME" || o.Name != "time" || o.Owner != "multi-round-chat" ||
		o.Default != 90*time.Second || *o.Min != 1 || *o.Max != 3600 || o.Help != "h" || o.Label != "Run time" || o.Group != "g" || !o.Advanced {
		t.Errorf("option %+v", o)
	}
	if opts[1].Default != 1.5 || opts[2].Default != nil {
		t.Errorf("defaults %v, %v; want 1.5 and none", opts[1].Default, opts[2].Default)
	}
	v, err := r.Load(Sources{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if v.Duration("mrc_time") != 90*time.Second || OptionValue(v.Get("mrc_time")) != int64(90*time.Second) || v.Has("mrc_users") {
		t.Errorf("mrc_time %v, users set %v", v.Get("mrc_time"), v.Has("mrc_users"))
	}
	_, err = NewRegistry().AddPlugin("long-doc-qa", "ldqa", []protocol.OptionSpec{
		{Name: "shuffle-policy", Type: protocol.OptionEnum, Default: "zigzag", Enum: []string{"random", "tile"}},
	})
	if err == nil || !strings.Contains(err.Error(), "ldqa_shuffle_policy") || !strings.Contains(err.Error(), `expected one of random, tile, got "zigzag"`) {
		t.Errorf("bad enum default: error %v", err)
	}
}
