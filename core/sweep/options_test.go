package sweep

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/config"
)

func flagsOf(t *testing.T, r *config.Registry, args ...string) *pflag.FlagSet {
	t.Helper()
	var f config.RunFlags
	fs := config.RunFlagSet(r, &f)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

// The sweep's options are read from any layer and checked, each error
// naming where the value came from.
func TestReadSettings(t *testing.T) {
	t.Parallel()
	r := config.NewRunRegistry(Options())
	v, err := r.Load(config.Sources{Environ: []string{"LMBENCH_SWEEP=rp_rate=1,2", "LMBENCH_SWEEP_SEARCH=true"}, Flags: flagsOf(t, r, "--sweep-search-steps", "5"), Partial: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadSettings(v)
	if err != nil || s.Spec != "rp_rate=1,2" || s.Origin != "LMBENCH_SWEEP" || !s.Search || s.SearchSteps != 5 || s.MinGood != DefaultMinGood || s.Continue {
		t.Errorf("ReadSweep = %+v, %v", s, err)
	}
	if got := Given(v, config.LayerEnv); strings.Join(got, ",") != "LMBENCH_SWEEP,LMBENCH_SWEEP_SEARCH" {
		t.Errorf("Given(env) = %v", got)
	}
	for args, want := range map[string]string{
		"--sweep-min-good=0":      "--sweep-min-good: must be a share in (0, 1], got 0",
		"--sweep-min-good=1.5":    "--sweep-min-good: must be a share in (0, 1], got 1.5",
		"--sweep-search-steps=21": "--sweep-search-steps: must be a whole number from 1 to 20, got 21",
		"--sweep-search-steps=0":  "--sweep-search-steps: must be a whole number from 1 to 20, got 0",
	} {
		v, err := r.Load(config.Sources{Environ: []string{}, Flags: flagsOf(t, r, args), Partial: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ReadSettings(v); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}
