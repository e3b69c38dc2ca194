package sdktest

import (
	"strings"
	"testing"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/workload"
)

// newRefuses is a workload whose options pass every check but whose New
// refuses 13 requests, as an older host would find out.
func newRefuses() workload.Definition[shardOptions] {
	def := pacedDef(false, false, 0)
	def.New = func(o shardOptions, env workload.Env) (workload.Workload, error) {
		if o.N == 13 {
			return nil, option.Errorf("n", "13 is unlucky")
		}
		return &paced{n: o.N}, nil
	}
	return def
}

func TestRefusedProblem(t *testing.T) {
	t.Parallel()
	def := newRefuses()
	for _, caps := range [][]string{nil, withoutCheckOptions} {
		problem := func(n int, want string) error {
			return refusedProblem(def, Options{Options: map[string]any{"n": n}, HostCapabilities: caps}, want, (*ConfigError).Error)
		}
		if err := problem(0, "n: must be >= 1, got 0"); err != nil {
			t.Errorf("caps %v, refused by the checks: %v", caps, err)
		}
		if err := problem(13, "n: 13 is unlucky"); err != nil {
			t.Errorf("caps %v, refused by New: %v", caps, err)
		}
		if err := problem(13, "n: 13 is fine"); err == nil || !strings.Contains(err.Error(), "refused otherwise (-want +got)") {
			t.Errorf("caps %v, refused otherwise: %v", caps, err)
		}
		if err := problem(2, "n: 13 is unlucky"); err == nil || !strings.Contains(err.Error(), "got <nil>, want a *sdktest.ConfigError") {
			t.Errorf("caps %v, accepted: %v", caps, err)
		}
	}
	zero := []option.FieldError{{Option: "n", Message: "must be >= 1, got 0"}}
	if err := refusedProblem(def, Options{Options: map[string]any{"n": 0}}, zero, (*ConfigError).Fields); err != nil {
		t.Errorf("field errors: %v", err)
	}
	CheckRefused(t, def, Options{Options: map[string]any{"n": 13}}, "n: 13 is unlucky")
}

// A case's options are set over the base's, which stay as they were.
func TestCheckFieldErrorsOverBase(t *testing.T) {
	t.Parallel()
	base := Options{Options: map[string]any{"n": 3, "typo": 1}}
	CheckFieldErrors(t, pacedDef(false, false, 0), base, []FieldErrorCase{
		{Name: "base's unknown option", Want: []option.FieldError{{Option: "typo", Message: "unknown option"}}},
		{Name: "case over base", Options: map[string]any{"n": 0}, Want: []option.FieldError{
			{Option: "typo", Message: "unknown option"}, {Option: "n", Message: "must be >= 1, got 0"}}},
	})
	if base.Options["n"] != 3 {
		t.Errorf("base options changed: %v", base.Options)
	}
}
