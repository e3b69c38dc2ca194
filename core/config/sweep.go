package config

import (
	"fmt"
)

// SweepGroup holds lmbench sweep's own options. lmbench run knows them
// (a file or environment shared by both loads) but refuses their flags,
// and ignores their file keys and variables with a warning.
const SweepGroup = "Sweep"

// Config keys of lmbench sweep's options.
const (
	KeySweep            = "sweep"
	keySweepContinue    = "sweep_continue"
	keySweepMinGood     = "sweep_min_good"
	keySweepSearch      = "sweep_search"
	keySweepSearchSteps = "sweep_search_steps"
)

// Defaults of --sweep-min-good and --sweep-search-steps.
const (
	DefaultSweepMinGood     = 0.90
	DefaultSweepSearchSteps = 3
)

// SweepOptions are lmbench sweep's own options.
func SweepOptions() []Option {
	return []Option{
		{Key: KeySweep, Type: tString, Label: "Swept option and values", Group: SweepGroup,
			Help: "The option to sweep (its config key) and its values: 1,2,4,8 or the ranges 1:8:x2, 1:8:+1, 1..8."},
		{Key: keySweepContinue, Type: tBool, Default: false, Label: "Run every point", Group: SweepGroup,
			Help: "Run every point (by default the ladder stops at the first point that saturates or breaks the SLO)."},
		{Key: keySweepMinGood, Type: tFloat, Default: DefaultSweepMinGood, Label: "Good share to meet the SLO", Group: SweepGroup,
			Help: "With --slo: the share of requests that must be good for a point to meet the SLO, in (0, 1]."},
		{Key: keySweepSearch, Type: tBool, Default: false, Label: "Search", Group: SweepGroup,
			Help: "With --slo: after the ladder, bisect for the highest value that meets it."},
		{Key: keySweepSearchSteps, Type: tInt, Default: int64(DefaultSweepSearchSteps), Label: "Search steps", Group: SweepGroup,
			Help: "Bisection steps, 1 to 20."},
	}
}

// Sweep is lmbench sweep's options, read and checked.
type Sweep struct {
	// Spec is --sweep KEY=VALUES as given ("": none), named by Origin.
	Spec, Origin string
	Continue     bool
	MinGood      float64
	Search       bool
	SearchSteps  int
}

// ReadSweep reads and checks the sweep's options; each error names where
// the value came from.
func ReadSweep(v *Values) (Sweep, error) {
	s := Sweep{Spec: v.String(KeySweep), Origin: v.Origin(KeySweep), Continue: v.Bool(keySweepContinue),
		MinGood: v.Float(keySweepMinGood), Search: v.Bool(keySweepSearch), SearchSteps: int(v.Int(keySweepSearchSteps))}
	if !(s.MinGood > 0 && s.MinGood <= 1) {
		return s, fmt.Errorf("%s: must be a share in (0, 1], got %s", v.Origin(keySweepMinGood), Format(s.MinGood))
	}
	if s.SearchSteps < 1 || s.SearchSteps > 20 {
		return s, fmt.Errorf("%s: must be a whole number from 1 to 20, got %d", v.Origin(keySweepSearchSteps), s.SearchSteps)
	}
	return s, nil
}

// SweepEntries are the sweep's options as --export-config writes them
// for lmbench sweep --config to replay.
func SweepEntries(s Sweep) []Entry {
	return []Entry{{Key: KeySweep, Value: s.Spec}, {Key: keySweepContinue, Value: s.Continue},
		{Key: keySweepMinGood, Value: s.MinGood}, {Key: keySweepSearch, Value: s.Search},
		{Key: keySweepSearchSteps, Value: int64(s.SearchSteps)}}
}

// SweepGiven lists where the sweep's options that layer l set were given
// ("--sweep", "LMBENCH_SWEEP_CONTINUE"): lmbench run refuses them as
// flags and warns about them otherwise.
func SweepGiven(v *Values, l Layer) []string {
	var out []string
	for _, o := range SweepOptions() {
		if v.src[o.Key] == l {
			out = append(out, v.Origin(o.Key))
		}
	}
	return out
}
