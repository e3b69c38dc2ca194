package sdktest

import (
	"strings"
	"testing"

	"github.com/lmbench/lmbench/sdk/option"
)

func TestFieldErrorsProblem(t *testing.T) {
	t.Parallel()
	def := pacedDef(false, false, 0)
	zero := []option.FieldError{{Option: "n", Message: "must be >= 1, got 0"}}
	for _, tc := range []struct {
		name string
		opts map[string]any
		want []option.FieldError
		says string // in the problem; "" for none
	}{
		{"refused as wanted", map[string]any{"n": 0}, zero, ""},
		{"refused otherwise", map[string]any{"n": -1}, zero, "field errors (-want +got)"},
		{"accepted", map[string]any{"n": 2}, zero, "got <nil>, want a *sdktest.ConfigError"},
	} {
		err := fieldErrorsProblem(def, Options{Options: tc.opts}, tc.want)
		switch {
		case tc.says == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.says != "" && (err == nil || !strings.Contains(err.Error(), tc.says)):
			t.Errorf("%s: problem %v, want one saying %q", tc.name, err, tc.says)
		}
	}
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
