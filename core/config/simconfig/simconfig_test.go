package simconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/sim"
)

func simRegistry(t *testing.T, flagPrefix string) *config.Registry {
	t.Helper()
	r := config.NewRegistry()
	for _, o := range Options(flagPrefix) {
		if _, err := r.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// Every field of sim.Config is a flag; parsed, they give the Config.
func TestConfigFromFlags(t *testing.T) {
	t.Parallel()
	r := simRegistry(t, "sim-")
	fs := flags(t, r,
		"--sim-model=m1", "--sim-prefill-per-token=1ms", "--sim-decode-per-token=2ms",
		"--sim-time-scale=0.5", "--sim-block-size=8", "--sim-default-max-tokens=3", "--sim-eos-after=5",
		"--sim-cpu-load-per-token=3us", "--sim-disk-load-per-token=7us", "--sim-tokens-per-gb=4096", "--sim-world-size=2",
		"--sim-gpu-gb=1.5", "--sim-cpu-gb=4", "--sim-disk-gb=16", "--sim-blend", "--sim-blend-recompute=0.2",
		"--sim-max-model-len=1000", "--sim-fault-seed=9", "--sim-fault-http-500=0.1", "--sim-fault-cut-stream=0.2",
		"--sim-fault-malformed-sse=0.3", "--sim-fault-slow-first-token=0.4", "--sim-fault-slow-first-token-delay=1s",
		"--sim-fault-stall-after-headers=0.5", "--sim-fault-stall-mid-stream=0.6", "--sim-fault-hold-after-done=0.7",
		"--sim-fault-die-after=12", "--sim-tokenizer-mode=subword", "--sim-no-tokenize",
		"--sim-fault-reset-noop", "--sim-fault-slow-hits", "--sim-kind=ollama", "--sim-extra-models=m2,m3",
	)
	v, err := r.Load(config.Sources{Flags: fs, Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Config(v)
	if err != nil {
		t.Fatal(err)
	}
	want := sim.Config{
		Model: "m1", PrefillPerToken: time.Millisecond, DecodePerToken: 2 * time.Millisecond,
		TimeScale: 0.5, BlockSize: 8, DefaultMaxTokens: 3, EOSAfter: 5,
		CPULoadPerToken: 3 * time.Microsecond, DiskLoadPerToken: 7 * time.Microsecond, TokensPerGB: 4096, WorldSize: 2,
		GPUGB: 1.5, CPUGB: 4, DiskGB: 16, Blend: true, BlendRecompute: 0.2, MaxModelLen: 1000,
		Tokenizer: sim.TokenizerSubword, NoTokenize: true, Kind: sim.KindOllama, ExtraModels: "m2,m3",
		Faults: sim.Faults{Seed: 9, HTTP500: 0.1, CutStream: 0.2, MalformedSSE: 0.3, SlowFirstToken: 0.4, SlowFirstTokenDelay: time.Second,
			StallAfterHeaders: 0.5, StallMidStream: 0.6, HoldAfterDone: 0.7, DieAfter: 12, ResetNoop: true, SlowHits: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config after parsing flags (-want +got):\n%s", diff)
	}
	// Exported and loaded back, the entries give the same Config.
	path := writeFile(t, "sim.json", "{}")
	if err := config.Write(path, Entries(got)); err != nil {
		t.Fatal(err)
	}
	v2, err := r.Load(config.Sources{File: path, Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	back, err := Config(v2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, back); diff != "" {
		t.Errorf("config after export and load (-want +got):\n%s", diff)
	}
	if n := len(Entries(got)); n != len(r.Owned("")) {
		t.Errorf("%d entries for %d options", n, len(r.Owned("")))
	}
}

// Unset, every setting keeps sim.DefaultConfig's value; the names are
// derived from the setting.
func TestOptionsDefaults(t *testing.T) {
	t.Parallel()
	r := simRegistry(t, "")
	v, err := r.Load(config.Sources{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Config(v)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sim.DefaultConfig(), got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	o, ok := r.LookupFlag("gpu-gb")
	if !ok || o.Key != "sim_gpu_gb" || o.Env != "LMBENCH_SIM_GPU_GB" || o.Group != config.SimGroup || !o.Advanced {
		t.Errorf("--gpu-gb: %+v", o)
	}
	if o, _ := r.LookupFlag("blend"); !strings.Contains(o.Help, "(except --blend-recompute of") {
		t.Errorf("--blend's help names its sibling without the prefix: %q", o.Help)
	}
}

// An invalid setting is named where its value came from: the flag, the
// variable or the file's key.
func TestConfigErrorsNameTheOrigin(t *testing.T) {
	t.Parallel()
	r := simRegistry(t, "sim-")
	path := writeFile(t, "run.json", `{"sim_world_size": 0}`)
	v, err := r.Load(config.Sources{
		File: path, Flags: flags(t, r, "--sim-gpu-gb=-1"),
		Environ: []string{"LMBENCH_SIM_BLEND_RECOMPUTE=2", "LMBENCH_SIM_TIME_SCALE=-1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Config(v)
	want := strings.Join([]string{
		"LMBENCH_SIM_TIME_SCALE: must be >= 0, got -1",
		`key "sim_world_size" in ` + path + ": must be >= 1, got 0",
		"--sim-gpu-gb: must be 0 (off) or a positive number of GB, got -1",
		"LMBENCH_SIM_BLEND_RECOMPUTE: must be between 0 and 1, got 2",
	}, "\n")
	if err == nil {
		t.Fatal("SimConfig = nil error")
	}
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if got, want := Given(v, config.LayerEnv), []string{"LMBENCH_SIM_TIME_SCALE", "LMBENCH_SIM_BLEND_RECOMPUTE"}; !cmp.Equal(want, got) {
		t.Errorf("Given(env) = %q, want %q", got, want)
	}
	if got, want := Given(v, config.LayerFlag), []string{"--sim-gpu-gb"}; !cmp.Equal(want, got) {
		t.Errorf("Given(flags) = %q, want %q", got, want)
	}
}

// Every name Validate reports is a setting of the table, so no error
// falls back to the Go field's name.
func TestValidateNamesAreSettings(t *testing.T) {
	t.Parallel()
	names := map[string]bool{}
	for _, s := range simSettings {
		names[s.name] = true
	}
	bad := sim.Config{TimeScale: -1, TokensPerGB: 0, WorldSize: 0, BlockSize: 0, GPUGB: -1, CPUGB: -1, DiskGB: -1,
		BlendRecompute: 2, Tokenizer: "x", PrefillPerToken: -1, CPULoadPerToken: -1, DiskLoadPerToken: -1, DecodePerToken: -1, EOSAfter: -1,
		Faults: sim.Faults{HTTP500: 2, CutStream: 2, MalformedSSE: 2, SlowFirstToken: 2, SlowFirstTokenDelay: -1,
			StallAfterHeaders: 2, StallMidStream: 2, HoldAfterDone: 2, DieAfter: -1}}
	err := bad.Validate()
	seen := 0
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		fe, ok := e.(*sim.FieldError)
		if !ok || !names[fe.Name] {
			t.Errorf("%v: not a setting of the table", e)
		}
		seen++
	}
	if seen < 25 {
		t.Errorf("only %d errors: the config is not invalid everywhere", seen)
	}
}

// lmbench sim's registry takes the settings as --gpu-gb, with the keys and
// variables lmbench run gives them (LMBENCH_SIM_CPU_GB).
func TestNewRegistry(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	v, err := r.Load(config.Sources{Flags: flags(t, r, "--gpu-gb=2"), Environ: []string{"LMBENCH_SIM_CPU_GB=3"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Config(v)
	if err != nil || got.GPUGB != 2 || got.CPUGB != 3 {
		t.Errorf("SimConfig = GPU %v GB, CPU %v GB, %v; want 2 and 3", got.GPUGB, got.CPUGB, err)
	}
}

func flags(t *testing.T, r *config.Registry, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	r.RegisterFlags(fs, nil)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
