package sweep

import "testing"

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
