package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/lmbench/lmbench/core/invocation"
	"github.com/lmbench/lmbench/core/plugin"
)

// interruptible watches SIGINT and SIGTERM for a run
// (invocation.Interrupts): the first drains, the second hurries, the
// third quits at once.
func (s *session) interruptible() (context.Context, <-chan struct{}, func()) {
	sig := make(chan os.Signal, 3)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	ctx, hurry, stop := invocation.Interrupts(sig, s.Log, s.quitNow)
	return ctx, hurry, func() {
		signal.Stop(sig)
		stop()
	}
}

// quitNow ends lmbench at once, on a third Ctrl-C, saying how to rebuild
// the files from the journal. The plugins are stopped first (and would
// die with the host anyway: the parent-death signal).
func (s *session) quitNow() {
	fmt.Fprintf(s.stderr, "lmbench: %s\n", invocation.QuitMessage(s.Journal()))
	plugin.Cleanup()
	os.Exit(invocation.ExitQuit)
}
