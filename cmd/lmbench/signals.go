package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/plugin"
	"github.com/lmbench/lmbench/core/record"
)

// interruptible returns a context cancelled by the first SIGINT or
// SIGTERM: the run stops dispatching and drains its in-flight requests.
// The second closes hurry: the requests still in flight are cancelled
// (recorded as failed) and the files are written, so they agree with the
// journal and the exit code is still 130. The third calls quit, which
// ends the process at once.
func interruptible(log zerolog.Logger, quit func()) (context.Context, <-chan struct{}, func()) {
	sig := make(chan os.Signal, 3)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	ctx, hurry, stop := onInterrupts(sig, log, quit)
	return ctx, hurry, func() {
		signal.Stop(sig)
		stop()
	}
}

// onInterrupts is interruptible's state machine over the signals sig
// delivers.
func onInterrupts(sig <-chan os.Signal, log zerolog.Logger, quit func()) (context.Context, <-chan struct{}, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	hurry := make(chan struct{})
	done := make(chan struct{})
	go func() {
		for n := 1; ; n++ {
			var s os.Signal
			select {
			case s = <-sig:
			case <-done:
				return
			}
			switch n {
			case 1:
				log.Warn().Str("signal", s.String()).Msg("stopping: no new requests; waiting for those in flight (Ctrl-C again to cancel them and write the files now)")
				cancel()
			case 2:
				log.Warn().Str("signal", s.String()).Msg("stopping now: cancelling the requests in flight and writing the files (Ctrl-C again to quit at once, leaving the files incomplete)")
				close(hurry)
			default:
				quit()
				return
			}
		}
	}()
	return ctx, hurry, func() {
		close(done)
		cancel()
	}
}

// quitNow ends lmbench at once, on a third Ctrl-C: the exporters may not
// have written everything, so once a run has started it says how to
// rebuild the files from the journal, which holds every finished request.
// The plugins are stopped first (and would die with the host anyway: the
// parent-death signal).
func (s *session) quitNow() {
	if j := s.journal.Load(); j != nil {
		fmt.Fprintf(s.stderr, "lmbench: quit at once: the result files may be incomplete; %s holds every finished request. Rebuild the files with:\n  lmbench export --journal %s\n",
			*j, shellQuote(*j))
	} else {
		fmt.Fprintln(s.stderr, "lmbench: quit at once; nothing was measured")
	}
	plugin.Cleanup()
	os.Exit(exitQuit)
}

// runJournal is the journal of a run writing into dir.
func runJournal(dir string) string { return filepath.Join(dir, record.JournalName) }
