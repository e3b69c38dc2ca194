package sim

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/pflag"
)

func TestDefaultConfigIsValid(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v, want nil", err)
	}
}

func TestValidateNamesTheField(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		modify func(*Config)
		want   string
	}{
		{"empty model", func(c *Config) { c.Model = "" }, "sim.Config.Model: must not be empty"},
		{"negative prefill", func(c *Config) { c.PrefillPerToken = -time.Millisecond },
			"sim.Config.PrefillPerToken: must be >= 0, got -1ms"},
		{"negative decode", func(c *Config) { c.DecodePerToken = -time.Second },
			"sim.Config.DecodePerToken: must be >= 0, got -1s"},
		{"negative time scale", func(c *Config) { c.TimeScale = -1 }, "sim.Config.TimeScale: must be >= 0, got -1"},
		{"NaN time scale", func(c *Config) { c.TimeScale = math.NaN() },
			"sim.Config.TimeScale: must be a finite number, got NaN"},
		{"zero block size", func(c *Config) { c.BlockSize = 0 }, "sim.Config.BlockSize: must be >= 1, got 0"},
		{"negative tier", func(c *Config) { c.CPUGB = -5 },
			"sim.Config.CPUGB: must be 0 (off) or a positive number of GB, got -5"},
		{"tier smaller than a block", func(c *Config) { c.GPUGB = 0.001 },
			"sim.Config.GPUGB: 0.001 GB holds less than one 16-token block at 8192 tokens per GB; use 0 (off) or at least 0.001953125"},
		{"tokens per GB not exact", func(c *Config) { c.TokensPerGB = 50000 },
			"sim.Config.TokensPerGB: 50000 cannot be reported exactly through /status (2^30 / (cache_size_per_token x world size 1) must give it back); use a power of two or a value <= 32767"},
		{"zero world size", func(c *Config) { c.WorldSize = 0 }, "sim.Config.WorldSize: must be >= 1, got 0"},
		{"blend recompute above 1", func(c *Config) { c.BlendRecompute = 1.5 },
			"sim.Config.BlendRecompute: must be between 0 and 1, got 1.5"},
		{"fault rate above 1", func(c *Config) { c.Faults.CutStream = 2 },
			"sim.Config.Faults.CutStream: must be a fraction between 0 and 1, got 2"},
		{"negative stall rate", func(c *Config) { c.Faults.StallAfterHeaders = -0.1 },
			"sim.Config.Faults.StallAfterHeaders: must be a fraction between 0 and 1, got -0.1"},
		{"stall rate above 1", func(c *Config) { c.Faults.StallMidStream = 1.5 },
			"sim.Config.Faults.StallMidStream: must be a fraction between 0 and 1, got 1.5"},
		{"NaN hold rate", func(c *Config) { c.Faults.HoldAfterDone = math.NaN() },
			"sim.Config.Faults.HoldAfterDone: must be a fraction between 0 and 1, got NaN"},
		{"negative die after", func(c *Config) { c.Faults.DieAfter = -1 },
			"sim.Config.Faults.DieAfter: must be >= 0 (0 = never), got -1"},
		{"negative load cost", func(c *Config) { c.DiskLoadPerToken = -time.Microsecond },
			"sim.Config.DiskLoadPerToken: must be >= 0, got -1µs"},
		{"max model len", func(c *Config) { c.MaxModelLen = 1 }, "sim.Config.MaxModelLen: must be >= 2, got 1"},
		{"zero default max tokens", func(c *Config) { c.DefaultMaxTokens = 0 },
			"sim.Config.DefaultMaxTokens: must be >= 1, got 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			tt.modify(&cfg)
			err := cfg.Validate()
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tt.want)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("Validate() error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateAllowsCachingOff(t *testing.T) {
	cfg := DefaultConfig()
	cfg.GPUGB, cfg.CPUGB, cfg.DiskGB = 0, 0, 0
	cfg.TimeScale = 0
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate() = %v, want nil", err)
	}
}

func TestRegisterFlags(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	cfg.RegisterFlags(fs, "sim-")
	err := fs.Parse([]string{
		"--sim-model=m1", "--sim-prefill-per-token=1ms", "--sim-decode-per-token=2ms",
		"--sim-time-scale=0.5", "--sim-block-size=8", "--sim-default-max-tokens=3",
		"--sim-cpu-load-per-token=3us", "--sim-disk-load-per-token=7us", "--sim-tokens-per-gb=4096", "--sim-world-size=2",
		"--sim-gpu-gb=1.5", "--sim-cpu-gb=4", "--sim-disk-gb=16", "--sim-blend", "--sim-blend-recompute=0.2",
		"--sim-max-model-len=1000", "--sim-fault-seed=9", "--sim-fault-http-500=0.1", "--sim-fault-cut-stream=0.2",
		"--sim-fault-malformed-sse=0.3", "--sim-fault-slow-first-token=0.4", "--sim-fault-slow-first-token-delay=1s",
		"--sim-fault-stall-after-headers=0.5", "--sim-fault-stall-mid-stream=0.6", "--sim-fault-hold-after-done=0.7",
		"--sim-fault-die-after=12", "--sim-tokenizer-mode=subword", "--sim-no-tokenize",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Model: "m1", PrefillPerToken: time.Millisecond, DecodePerToken: 2 * time.Millisecond,
		TimeScale: 0.5, BlockSize: 8, DefaultMaxTokens: 3,
		CPULoadPerToken: 3 * time.Microsecond, DiskLoadPerToken: 7 * time.Microsecond, TokensPerGB: 4096, WorldSize: 2,
		GPUGB: 1.5, CPUGB: 4, DiskGB: 16, Blend: true, BlendRecompute: 0.2, MaxModelLen: 1000,
		Tokenizer: TokenizerSubword, NoTokenize: true,
		Faults: Faults{Seed: 9, HTTP500: 0.1, CutStream: 0.2, MalformedSSE: 0.3, SlowFirstToken: 0.4, SlowFirstTokenDelay: time.Second,
			StallAfterHeaders: 0.5, StallMidStream: 0.6, HoldAfterDone: 0.7, DieAfter: 12},
	}
	if diff := cmp.Diff(want, cfg, cmpopts.IgnoreUnexported(Config{})); diff != "" {
		t.Errorf("config after parsing flags (-want +got):\n%s", diff)
	}

	unprefixed := DefaultConfig()
	fs = pflag.NewFlagSet("test", pflag.ContinueOnError)
	unprefixed.RegisterFlags(fs, "")
	for _, name := range []string{"model", "prefill-per-token", "decode-per-token", "time-scale",
		"block-size", "gpu-gb", "cpu-gb", "disk-gb", "tokens-per-gb", "blend", "default-max-tokens",
		"fault-stall-after-headers", "fault-stall-mid-stream", "fault-hold-after-done", "fault-die-after"} {
		if fs.Lookup(name) == nil {
			t.Errorf("RegisterFlags(fs, \"\") did not register --%s", name)
		}
	}
}

func TestValidateNamesTheFlag(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	cfg.RegisterFlags(fs, "sim-")
	if err := fs.Parse([]string{"--sim-time-scale=-1", "--sim-block-size=0"}); err != nil {
		t.Fatal(err)
	}
	err := cfg.Validate()
	if err == nil {
		t.Fatal("Validate() = nil, want errors for --sim-time-scale and --sim-block-size")
	}
	want := "--sim-time-scale: must be >= 0, got -1\n--sim-block-size: must be >= 1, got 0"
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("Validate() error (-want +got):\n%s", diff)
	}
	if _, err := New(cfg, nopLogger()); err == nil || !strings.Contains(err.Error(), "--sim-time-scale") {
		t.Errorf("New with invalid config: err = %v, want it to name --sim-time-scale", err)
	}
}
