package sdktest

import (
	"errors"
	"fmt"
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/option"
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
			if err := fieldErrorsProblem(def, o, tc.Want); err != nil {
				t.Errorf("%s with options %v: %v", def.Name, o.Options, err)
			}
		})
	}
}

// fieldErrorsProblem says how a run with o differs from one Configure
// refuses with want (nil: it does not).
func fieldErrorsProblem[O any](def workload.Definition[O], o Options, want []option.FieldError) error {
	_, err := RunE(def, o)
	var ce *ConfigError
	if !errors.As(err, &ce) {
		return fmt.Errorf("got %v, want a *sdktest.ConfigError", err)
	}
	if d := cmp.Diff(want, ce.Fields()); d != "" {
		return fmt.Errorf("field errors (-want +got):\n%s", d)
	}
	return nil
}
