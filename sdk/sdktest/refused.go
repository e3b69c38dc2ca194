package sdktest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/workload"
)

// FieldErrorCase is a configuration Configure must refuse, and the field
// errors it must report, in order.
type FieldErrorCase struct {
	Name string
	// Options are set over the base run's Options (names without prefix).
	Options map[string]any
	Want    []option.FieldError
}

// CheckFieldErrors runs def once per case, each in a parallel subtest
// named after the case, with base's options overridden by the case's, and
// fails the subtest unless the run stops at Configure with exactly the
// case's field errors:
//
//	sdktest.CheckFieldErrors(t, Definition, sdktest.Options{}, []sdktest.FieldErrorCase{
//		{Name: "no requests", Options: map[string]any{"requests": 0},
//			Want: []option.FieldError{{Option: "requests", Message: "must be >= 1, got 0"}}},
//	})
func CheckFieldErrors[O any](t *testing.T, def workload.Definition[O], base Options, cases []FieldErrorCase) {
	t.Helper()
	for _, tc := range cases {
		o := base
		o.Options = maps.Clone(base.Options)
		if o.Options == nil {
			o.Options = map[string]any{}
		}
		maps.Copy(o.Options, tc.Options)
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			if err := refusedProblem(def, o, tc.Want, (*ConfigError).Fields); err != nil {
				t.Errorf("%s with options %v: %v", def.Name, o.Options, err)
			}
		})
	}
}

// withoutCheckOptions is a host that skips the check-only Configure.
var withoutCheckOptions = slices.DeleteFunc(slices.Clone(protocol.HostCapabilities), func(c string) bool { return c == protocol.CheckOptions })

// CheckRefused runs def with o as a host with the check-only Configure
// (protocol.CheckOptions: it runs the options' Validate, Precheck and
// PrecheckShard before contacting the engine) and as an older host that
// skips it, where New must refuse what the checks would have, and fails t
// unless both runs stop at Configure with the error want (the
// *ConfigError's text: "option: message", several joined by "; ").
// o.HostCapabilities is ignored.
func CheckRefused[O any](t *testing.T, def workload.Definition[O], o Options, want string) {
	t.Helper()
	for _, host := range []struct {
		name string
		caps []string
	}{{"a host with the check-only Configure", nil}, {"a host without it", withoutCheckOptions}} {
		o.HostCapabilities = host.caps
		if err := refusedProblem(def, o, want, (*ConfigError).Error); err != nil {
			t.Errorf("%s with options %v, %s: %v", def.Name, o.Options, host.name, err)
		}
	}
}

// refusedProblem says how a run with o differs from one that Configure
// refuses with want, as got reads the refusal (nil: it does not).
func refusedProblem[O, W any](def workload.Definition[O], o Options, want W, got func(*ConfigError) W) error {
	_, err := RunE(def, o)
	var ce *ConfigError
	if !errors.As(err, &ce) {
		return fmt.Errorf("got %v, want a *sdktest.ConfigError", err)
	}
	if d := cmp.Diff(want, got(ce)); d != "" {
		return fmt.Errorf("refused otherwise (-want +got):\n%s", d)
	}
	return nil
}
