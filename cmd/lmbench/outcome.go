package main

import (
	"fmt"

	"github.com/lmbench/lmbench/core/host"
)

// aborted says why lmbench stopped the run and where its results are,
// and returns the exit code: 1.
func (s *session) aborted(res *host.Result) int {
	why := "the run was stopped"
	if res.Abort != nil {
		why = res.Abort.Reason
	}
	fmt.Fprintf(s.stderr, "lmbench: run aborted: %s\n", why)
	if res.JournalPath != "" {
		fmt.Fprintf(s.stderr, "lmbench: the results so far are written; every finished request is in %s\n", res.JournalPath)
	}
	return exitFailed
}
