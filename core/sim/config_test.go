package sim

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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

// Validate's errors are FieldErrors naming the setting as a flag would
// and the Go field, in the order of the fields.
func TestValidateFieldErrors(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.TimeScale, cfg.BlockSize = -1, 0
	err := cfg.Validate()
	if err == nil {
		t.Fatal("Validate() = nil, want errors for TimeScale and BlockSize")
	}
	var got []FieldError
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var fe *FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("%v is not a *FieldError", e)
		}
		got = append(got, *fe)
	}
	want := []FieldError{
		{Name: "time-scale", Field: "TimeScale", Reason: "must be >= 0, got -1"},
		{Name: "block-size", Field: "BlockSize", Reason: "must be >= 1, got 0"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Validate() errors (-want +got):\n%s", diff)
	}
	if _, err := New(cfg, nopLogger()); err == nil || !strings.Contains(err.Error(), "sim.Config.TimeScale") {
		t.Errorf("New with invalid config: err = %v, want it to name sim.Config.TimeScale", err)
	}
}
