package invocation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/abort"
	"github.com/lmbench/lmbench/core/bench"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/record"
)

func newTestSession(t *testing.T) *Session {
	t.Helper()
	s := New("test", func(string, string) (zerolog.Logger, error) { return zerolog.Nop(), nil })
	t.Cleanup(s.Close)
	return s
}

// Mistakes on the command line are usage errors, found before any plugin
// starts; help with no workload named starts none.
func TestResolveUsageErrors(t *testing.T) {
	t.Setenv("LMBENCH_PLUGIN_PATH", t.TempDir()) // no plugins: none may be needed
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--workload", "a", "--workload-plugin", "/x/b"}, `--workload and --workload-plugin both name the workload ("a" and "/x/b"): give one`},
		{[]string{"--no-csv", "stray"}, `unexpected argument "stray" (flags start with --)`},
		{[]string{"--seed"}, "flag needs an argument"},
	} {
		_, err := newTestSession(t).Resolve(tc.args, nil)
		var ue config.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error containing %q", tc.args, err, tc.want)
		}
	}
	r, err := newTestSession(t).Resolve([]string{"--help"}, nil)
	if err != nil || !r.Flags.Help || r.Workload != nil || len(r.Exporters) != 0 {
		t.Fatalf("--help: %+v, %v", r, err)
	}
}

// The logger is built from the first pass's level and format; a bad one
// is a usage error.
func TestResolveBuildsTheLogger(t *testing.T) {
	t.Setenv("LMBENCH_PLUGIN_PATH", t.TempDir())
	var got string
	s := New("test", func(level, format string) (zerolog.Logger, error) {
		got = level + "/" + format
		return zerolog.Nop(), fmt.Errorf("no such level %q", level)
	})
	defer s.Close()
	_, err := s.Resolve([]string{"--log-level", "debug", "--log-format", "json", "--help"}, nil)
	var ue config.UsageError
	if got != "debug/json" || !errors.As(err, &ue) {
		t.Errorf("NewLog saw %q; error %v, want a usage error", got, err)
	}
}

// An aborted run says why, what else failed, and where its records are;
// with a result file failed too, how to rebuild the files.
func TestAbortedNotes(t *testing.T) {
	t.Parallel()
	cause := &abort.Cause{Title: "engine gone", Reason: "20 connections refused in a row"}
	disk := errors.New("csv: no space left on device")
	for _, tc := range []struct {
		name string
		res  bench.Result
		want []string
	}{
		{"alone", bench.Result{Abort: cause, Err: cause, JournalPath: "out/j.jsonl"}, []string{
			"run aborted: 20 connections refused in a row",
			"the results so far are written; every finished request is in out/j.jsonl",
		}},
		// The workload's failure is the abort's reason: said once.
		{"workload failed", bench.Result{Abort: &abort.Cause{Title: "workload failed", Reason: "workload failed: " + disk.Error()},
			Err: disk, JournalPath: "out/j.jsonl"}, []string{
			"run aborted: workload failed: csv: no space left on device",
			"the results so far are written; every finished request is in out/j.jsonl",
		}},
		{"with a file failed", bench.Result{Abort: cause, Err: errors.Join(cause, disk), FilesFailed: true, JournalPath: "my out/j.jsonl"}, []string{
			"run aborted: 20 connections refused in a row",
			"also: csv: no space left on device",
			"every finished request is in my out/j.jsonl",
			"the result files may be incomplete; rebuild them with:\n  lmbench export --journal 'my out/j.jsonl' --output-dir DIR",
		}},
		{"no journal", bench.Result{}, []string{"run aborted: the run was stopped"}},
	} {
		if d := cmp.Diff(tc.want, aborted(&tc.res)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
}

// How a finished run ends: its exit code and what it says.
func TestFinishEndings(t *testing.T) {
	t.Parallel()
	x := &Run{Resolved: &Resolved{}, s: New("test", nil)}
	x.s.SetLog(zerolog.Nop())
	for _, tc := range []struct {
		name  string
		res   bench.Result
		code  int
		notes []string
	}{
		{"completed", bench.Result{Status: record.Completed}, ExitOK, nil},
		{"interrupted", bench.Result{Status: record.Interrupted, Interrupted: true}, ExitInterrupted,
			[]string{"interrupted; the results so far are written"}},
		{"aborted", bench.Result{Status: record.Aborted}, ExitFailed, []string{"run aborted: the run was stopped"}},
	} {
		end := x.finish(context.Background(), Display{}, &tc.res)
		if end.Code != tc.code || end.Err != nil || !cmp.Equal(tc.notes, end.Notes) {
			t.Errorf("%s: %+v, want code %d, notes %q", tc.name, end, tc.code, tc.notes)
		}
	}
	res := bench.Result{Status: record.Completed}
	res.Final.FailedRequests, res.Final.TotalRequests = 2, 10
	if end := x.finish(context.Background(), Display{}, &res); end.Code != ExitFailed ||
		!cmp.Equal([]string{"2 of 10 measured requests failed (see the error column of the results)"}, end.Notes) {
		t.Errorf("failed requests: %+v", end)
	}
}

func TestQuitMessage(t *testing.T) {
	t.Parallel()
	if got := QuitMessage(""); got != "quit at once; nothing was measured" {
		t.Errorf("before a run: %q", got)
	}
	if got := QuitMessage("a b/j.jsonl"); !strings.HasSuffix(got, "lmbench export --journal 'a b/j.jsonl'") || !strings.Contains(got, "a b/j.jsonl holds every finished request") {
		t.Errorf("during a run: %q", got)
	}
}
