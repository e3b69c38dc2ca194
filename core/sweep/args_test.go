package sweep

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The sweep's flags are taken out, in both spellings; every other
// argument is the run's, in order.
func TestSplitArgs(t *testing.T) {
	t.Parallel()
	f, rest, err := SplitArgs([]string{"--workload", "random-prefill", "--sweep", "rp_rate=1,2", "--sweep-search",
		"--sweep-min-good=0.5", "--sweep-search-steps", "4", "--sweep-continue", "-q"})
	if err != nil {
		t.Fatal(err)
	}
	want := Flags{Spec: "rp_rate=1,2", Search: true, SearchSteps: 4, MinGood: 0.5, Continue: true}
	if d := cmp.Diff(want, f); d != "" {
		t.Errorf("flags (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"--workload", "random-prefill", "-q"}, rest); d != "" {
		t.Errorf("the run's arguments (-want +got):\n%s", d)
	}
	f, _, err = SplitArgs(nil)
	if err != nil || f.SearchSteps != DefaultSearchSteps || f.MinGood != DefaultMinGood {
		t.Errorf("defaults: %+v, %v", f, err)
	}
}

func TestSplitArgsErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sweep", "a=1", "--sweep", "b=2"}, "--sweep is given twice"},
		{[]string{"--sweep"}, "--sweep needs a value"},
		{[]string{"--sweep-search-steps", "21"}, `--sweep-search-steps: must be a whole number from 1 to 20, got "21"`},
		{[]string{"--sweep-min-good=0"}, `--sweep-min-good: must be a share in (0, 1], got "0"`},
		{[]string{"--sweep-min-good", "x"}, `--sweep-min-good: must be a share in (0, 1], got "x"`},
	} {
		if _, _, err := SplitArgs(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// A complete sweep exits 0 unless a point had failed requests; one that
// ended early exits as its last point did.
func TestExitCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		res  Result
		want int
	}{
		{Result{Complete: true, Points: []Point{{ExitCode: 0}, {ExitCode: 0}}}, 0},
		{Result{Complete: true, Points: []Point{{ExitCode: 1}, {ExitCode: 0}}}, 1},
		{Result{Complete: false, Points: []Point{{ExitCode: 0}, {ExitCode: 130}}}, 130},
		{Result{Complete: false}, 1},
	} {
		if got := tc.res.ExitCode(); got != tc.want {
			t.Errorf("%+v: exit %d, want %d", tc.res, got, tc.want)
		}
	}
}
