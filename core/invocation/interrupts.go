package invocation

import (
	"context"
	"os"

	"github.com/rs/zerolog"
)

// Interrupts is what a run does on each SIGINT or SIGTERM sig delivers:
// the first cancels the returned context (the run stops dispatching and
// drains its in-flight requests); the second closes hurry (the requests
// still in flight are cancelled, recorded as failed, and the files are
// written, so they agree with the journal and the exit code is still
// 130); the third calls quit, which ends the process at once. stop ends
// the watch.
func Interrupts(sig <-chan os.Signal, log zerolog.Logger, quit func()) (_ context.Context, hurry <-chan struct{}, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	h := make(chan struct{})
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
				close(h)
			default:
				quit()
				return
			}
		}
	}()
	return ctx, h, func() {
		close(done)
		cancel()
	}
}

// QuitMessage is what a third Ctrl-C says before lmbench ends at once:
// the exporters may not have written everything, so once a run has
// started it says how to rebuild the files from journal, which holds
// every finished request ("": nothing was measured).
func QuitMessage(journal string) string {
	if journal == "" {
		return "quit at once; nothing was measured"
	}
	return "quit at once: the result files may be incomplete; " + journal +
		" holds every finished request. Rebuild the files with:\n  lmbench export --journal " + ShellQuote(journal)
}
