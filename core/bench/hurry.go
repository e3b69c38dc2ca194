package bench

import (
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/dispatch"
)

// watchHurry cancels every in-flight request once hurry is closed (a
// second Ctrl-C): they are recorded as failed ("context canceled"), the
// loop's drain ends at once, and the run goes on to write its files, so
// they still agree with the journal. A nil hurry is never closed.
func watchHurry(hurry <-chan struct{}, tr *dispatch.Transport, log zerolog.Logger) (stop func()) {
	if hurry == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-hurry:
			log.Warn().Msg("cancelling the requests in flight (recorded as failed); writing the files")
			tr.Abandon()
		case <-done:
		}
	}()
	return func() { close(done) }
}
