package sweep

import (
	"fmt"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Group holds lmbench sweep's own options. They join lmbench run's
// registry (a file or environment shared by both loads), hidden from
// run's help, completion and guided setup.
const Group = "Sweep"

// Config keys of lmbench sweep's options.
const (
	KeySpec        = "sweep"
	keyContinue    = "sweep_continue"
	keyMinGood     = "sweep_min_good"
	keySearch      = "sweep_search"
	keySearchSteps = "sweep_search_steps"
)

// Defaults of --sweep-min-good and --sweep-search-steps.
const (
	DefaultMinGood     = 0.90
	DefaultSearchSteps = 3
)

// Options are lmbench sweep's own options, as registry options: each a
// flag, a config key and an LMBENCH_SWEEP* variable.
func Options() []config.Option {
	return []config.Option{
		{Key: KeySpec, Type: protocol.OptionString, Label: "Swept option and values", Group: Group, Hidden: true,
			Help: "The option to sweep (its config key) and its values: 1,2,4,8 or the ranges 1:8:x2, 1:8:+1, 1..8."},
		{Key: keyContinue, Type: protocol.OptionBool, Default: false, Label: "Run every point", Group: Group, Hidden: true,
			Help: "Run every point (by default the ladder stops at the first point that saturates or breaks the SLO)."},
		{Key: keyMinGood, Type: protocol.OptionFloat, Default: DefaultMinGood, Label: "Good share to meet the SLO", Group: Group, Hidden: true,
			Help: "With --slo: the share of requests that must be good for a point to meet the SLO, in (0, 1]."},
		{Key: keySearch, Type: protocol.OptionBool, Default: false, Label: "Search", Group: Group, Hidden: true,
			Help: "With --slo: after the ladder, bisect for the highest value that meets it."},
		{Key: keySearchSteps, Type: protocol.OptionInt, Default: int64(DefaultSearchSteps), Label: "Search steps", Group: Group, Hidden: true,
			Help: "Bisection steps, 1 to 20."},
	}
}

// Settings are lmbench sweep's options, read and checked.
type Settings struct {
	// Spec is --sweep KEY=VALUES as given ("": none), named by Origin.
	Spec, Origin string
	Continue     bool
	MinGood      float64
	Search       bool
	SearchSteps  int
}

// ReadSettings reads and checks the sweep's options; each error names
// where the value came from.
func ReadSettings(v *config.Values) (Settings, error) {
	s := Settings{Spec: v.String(KeySpec), Origin: v.Origin(KeySpec), Continue: v.Bool(keyContinue),
		MinGood: v.Float(keyMinGood), Search: v.Bool(keySearch), SearchSteps: int(v.Int(keySearchSteps))}
	if !(s.MinGood > 0 && s.MinGood <= 1) {
		return s, fmt.Errorf("%s: must be a share in (0, 1], got %s", v.Origin(keyMinGood), config.Format(s.MinGood))
	}
	if s.SearchSteps < 1 || s.SearchSteps > 20 {
		return s, fmt.Errorf("%s: must be a whole number from 1 to 20, got %d", v.Origin(keySearchSteps), s.SearchSteps)
	}
	return s, nil
}

// Entries are the sweep's options as --export-config writes them, for
// lmbench sweep --config to replay.
func (s Settings) Entries() []config.Entry {
	return []config.Entry{{Key: KeySpec, Value: s.Spec}, {Key: keyContinue, Value: s.Continue},
		{Key: keyMinGood, Value: s.MinGood}, {Key: keySearch, Value: s.Search},
		{Key: keySearchSteps, Value: int64(s.SearchSteps)}}
}

// Given lists where the sweep's options that layer l set were given
// ("--sweep", "LMBENCH_SWEEP_CONTINUE"): lmbench run refuses them as
// flags and warns about them otherwise.
func Given(v *config.Values, l config.Layer) []string {
	var out []string
	for _, o := range Options() {
		if v.Layer(o.Key) == l {
			out = append(out, v.Origin(o.Key))
		}
	}
	return out
}
