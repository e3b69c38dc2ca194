package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/ui"
	"github.com/lmbench/lmbench/core/invocation"
)

// cmdSweep is `lmbench sweep`: the run and the sweep's options resolved
// and checked once, then core runs the points in process, each as
// lmbench run would (its own signals, display and ending), or exports
// the configuration.
func cmdSweep(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	s := newSession(stdin, stdout, stderr)
	defer s.Close()
	sw, err := s.Sweep(args, stderr)
	if err != nil {
		return invocation.ExitFailed, cliError(err)
	}
	if sw.Help {
		fmt.Fprint(stdout, ui.SweepUsage)
		return invocation.ExitOK, nil
	}
	if path := sw.ExportPath(); path != "" {
		ctx, _, stop := s.interruptible()
		defer stop()
		x, err := sw.Start(ctx)
		if err != nil {
			return invocation.ExitFailed, cliError(err)
		}
		return exportConfig(stdout, x, path)
	}
	res, err := sw.Run(context.Background(), func(_ context.Context, start func(context.Context, invocation.Display) invocation.Ending) invocation.Ending {
		ctx, hurry, stop := s.interruptible()
		defer stop()
		code, err := s.ended(start(ctx, s.display(hurry)))
		return invocation.Ending{Code: code, Err: err}
	})
	if res == nil {
		return invocation.ExitFailed, err
	}
	return res.ExitCode(), err
}
