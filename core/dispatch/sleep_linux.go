package dispatch

import (
	"syscall"
	"time"
)

// sleepPrecisely sleeps d in the kernel (nanosleep), which wakes within
// tens of microseconds; a Go timer can wake up to a millisecond late, as
// the runtime's poller sleeps in whole milliseconds.
func sleepPrecisely(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for {
		// EINTR (a signal) leaves the rest of the sleep in ts.
		if err := syscall.Nanosleep(&ts, &ts); err != syscall.EINTR {
			return
		}
	}
}
