package overhead

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestCalibrateCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   Calibrate
		want string
	}{
		{Calibrate{Journal: "j", Repeat: 1}, ""},
		{Calibrate{Repeat: 1}, "--journal: required"},
		{Calibrate{Journal: "j", Repeat: 0}, "--repeat: must be >= 1, got 0"},
	} {
		err := c.in.Check()
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: Check() = %v, want %q", c.in, err, c.want)
		}
	}
}

// A directory given as --journal is named as such before anything runs.
func TestCalibrateJournalIsADirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := Calibrate{Journal: dir, Repeat: 1}.Run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "is a directory; expected its bench_journal.jsonl") {
		t.Errorf("Run(%s) = %v", dir, err)
	}
}

// The block prints an undefined figure as n/a, never 0, and Err counts
// the failed requests of every replay.
func TestCalibrationText(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	c := &Calibration{Requests: 4, Repeat: 2, Span: 1500 * time.Millisecond, CPUs: 2, Failed: 8,
		TTFTP50Ms: nan, TTFTP99Ms: nan, TTFTMaxMs: nan, DispatchLagP50Ms: 0.25, DispatchLagP99Ms: 1, DispatchLagMaxMs: 2}
	var b strings.Builder
	c.WriteText(&b, "run/bench_journal.jsonl")
	out := b.String()
	for _, want := range []string{
		"Schedule of run/bench_journal.jsonl\n",
		"Requests x replays:" + strings.Repeat(" ", 56-len("Requests x replays:")-len("4 x 2")) + "4 x 2\n",
		"Schedule span (s):", "1.50\n",
		"Client-added TTFT P50 (ms):", "n/a\n",
		"Dispatch lag P50 (ms):", "0.25\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "8 of 8 requests failed") {
		t.Errorf("Err() = %v", err)
	}
	if err := (&Calibration{Requests: 3, Repeat: 1}).Err(); err != nil {
		t.Errorf("no failures: Err() = %v", err)
	}
}
