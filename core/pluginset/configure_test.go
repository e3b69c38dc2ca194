package pluginset

import (
	"errors"
	"testing"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// A plugin's Configure errors each name the flag its option came from,
// else the plugin, else nothing.
func TestFieldErrors(t *testing.T) {
	t.Parallel()
	flag := func(o string) string {
		if o == "hidden" {
			return ""
		}
		return "--fp-" + o
	}
	err := FieldErrors([]protocol.FieldError{{Option: "qps", Message: "must be > 0, got 0"}}, "workload fp", flag)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Flag != "--fp-qps" || fe.Error() != "--fp-qps: must be > 0, got 0" {
		t.Errorf("FieldErrors = %v (%#v)", err, fe)
	}
	for _, tc := range []struct {
		plugin string
		flag   func(string) string
		option string
		want   string
	}{
		{"", nil, "qps", "bad"},
		{"workload fp", nil, "qps", "workload fp: bad"},
		{"workload fp", flag, "hidden", "workload fp: bad"},
		{"workload fp", flag, "", "workload fp: bad"},
	} {
		if err := FieldErrors([]protocol.FieldError{{Option: tc.option, Message: "bad"}}, tc.plugin, tc.flag); err.Error() != tc.want {
			t.Errorf("FieldErrors(option %q, plugin %q, flag set %v) = %q, want %q", tc.option, tc.plugin, tc.flag != nil, err, tc.want)
		}
	}
	two := FieldErrors([]protocol.FieldError{{Option: "a", Message: "x"}, {Option: "b", Message: "y"}}, "", flag)
	if two.Error() != "--fp-a: x\n--fp-b: y" {
		t.Errorf("two errors = %q", two)
	}
}
