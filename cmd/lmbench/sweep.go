package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/ui"
	"github.com/lmbench/lmbench/core/invocation"
	"github.com/lmbench/lmbench/core/sweep"
)

// cmdSweep is `lmbench sweep`: its flags, the run resolved and checked
// once, then core runs the points in process, each as lmbench run would
// (its own signals, display and ending).
func cmdSweep(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	f, runArgs, err := sweep.SplitArgs(args)
	if err != nil {
		return exitUsage, usageError{err}
	}
	if f.Help {
		fmt.Fprint(stdout, ui.SweepUsage)
		return exitOK, nil
	}
	s := newSession(stdin, stdout, stderr)
	defer s.Close()
	sw, err := s.Sweep(f, runArgs, stderr)
	if err != nil {
		return exitFailed, cliError(err)
	}
	res, err := sw.Run(context.Background(), func(_ context.Context, start func(context.Context, invocation.Display) invocation.Ending) invocation.Ending {
		ctx, hurry, stop := s.interruptible()
		defer stop()
		code, err := s.ended(start(ctx, s.display(hurry)))
		return invocation.Ending{Code: code, Err: err}
	})
	if res == nil {
		return exitFailed, err
	}
	return res.ExitCode(), err
}
