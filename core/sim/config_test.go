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
		{"negative cache", func(c *Config) { c.CacheTokens = -5 },
			"sim.Config.CacheTokens: must be 0 (off) or at least one block (16 tokens), got -5"},
		{"cache smaller than a block", func(c *Config) { c.CacheTokens = 8 },
			"sim.Config.CacheTokens: must be 0 (off) or at least one block (16 tokens), got 8"},
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
	cfg.CacheTokens = 0
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
		"--sim-time-scale=0.5", "--sim-block-size=8", "--sim-cache-tokens=64", "--sim-default-max-tokens=3",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Model: "m1", PrefillPerToken: time.Millisecond, DecodePerToken: 2 * time.Millisecond,
		TimeScale: 0.5, BlockSize: 8, CacheTokens: 64, DefaultMaxTokens: 3,
	}
	if diff := cmp.Diff(want, cfg, cmpopts.IgnoreUnexported(Config{})); diff != "" {
		t.Errorf("config after parsing flags (-want +got):\n%s", diff)
	}

	unprefixed := DefaultConfig()
	fs = pflag.NewFlagSet("test", pflag.ContinueOnError)
	unprefixed.RegisterFlags(fs, "")
	for _, name := range []string{"model", "prefill-per-token", "decode-per-token", "time-scale",
		"block-size", "cache-tokens", "default-max-tokens"} {
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
