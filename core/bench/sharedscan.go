package bench

import (
	"sync"

	"github.com/lmbench/lmbench/core/record"
)

// sharedScan lets several readers of a run's records share one pass over
// the journal: decoding it is most of what the summary costs a long run.
// Each reader runs on its own goroutine with a scanFunc of its own
// (reader); the pass starts once every reader has either asked for the
// records or finished without them, and hands each record to every
// asker's fn in turn (the record is reused between calls, as
// record.ScanJournal's is). Every asker gets the pass's header and error.
type sharedScan struct {
	scan scanFunc

	mu      sync.Mutex
	fns     []func(*record.Record) error
	pending int           // readers that have neither asked nor finished
	done    chan struct{} // closed when the pass is over
	run     record.Run
	err     error
}

func newSharedScan(scan scanFunc, readers int) *sharedScan {
	return &sharedScan{scan: scan, pending: readers, done: make(chan struct{})}
}

// reader is the scanFunc of one reader; leave must be called when that
// reader returns, whether or not it scanned.
func (s *sharedScan) reader() (scan scanFunc, leave func()) {
	asked := false
	scan = func(fn func(*record.Record) error) (record.Run, error) {
		asked = true
		s.mu.Lock()
		s.fns = append(s.fns, fn)
		s.arrived()
		<-s.done
		return s.run, s.err
	}
	leave = func() {
		if !asked {
			s.mu.Lock()
			s.arrived()
		}
	}
	return scan, leave
}

// arrived counts one reader in (s.mu held, released here); the last one
// makes the pass.
func (s *sharedScan) arrived() {
	s.pending--
	last := s.pending == 0
	s.mu.Unlock()
	if !last {
		return
	}
	if len(s.fns) > 0 {
		s.run, s.err = s.scan(func(r *record.Record) error {
			for _, fn := range s.fns {
				if err := fn(r); err != nil {
					return err
				}
			}
			return nil
		})
	}
	close(s.done)
}
