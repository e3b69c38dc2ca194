package main

import (
	"errors"
	"fmt"

	"github.com/lmbench/lmbench/core/bench"
)

// aborted says why lmbench stopped the run, what else went wrong, and
// where every finished request is, and returns the exit code: 1. When a
// result file could not be written (a full disk fails the exporters
// too), it says how to rebuild the files from the journal.
func (s *session) aborted(res *bench.Result) int {
	why := "the run was stopped"
	if res.Abort != nil {
		why = res.Abort.Reason
	}
	fmt.Fprintf(s.stderr, "lmbench: run aborted: %s\n", why)
	var stop error
	if res.Abort != nil {
		stop = res.Abort
	}
	others := otherErrors(res.Err, stop)
	for _, err := range others {
		fmt.Fprintf(s.stderr, "lmbench: also: %v\n", err)
	}
	if res.JournalPath == "" {
		return exitFailed
	}
	if len(others) == 0 {
		fmt.Fprintf(s.stderr, "lmbench: the results so far are written; every finished request is in %s\n", res.JournalPath)
		return exitFailed
	}
	fmt.Fprintf(s.stderr, "lmbench: every finished request is in %s\n", res.JournalPath)
	fmt.Fprintf(s.stderr, "lmbench: the result files may be incomplete; rebuild them with:\n  lmbench export --journal %s --output-dir DIR\n",
		shellQuote(res.JournalPath))
	return exitFailed
}

// otherErrors are the errors err joins besides the abort's cause a.
func otherErrors(err, a error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, otherErrors(e, a)...)
		}
		return out
	}
	if a != nil && errors.Is(err, a) {
		return nil
	}
	return []error{err}
}
