//go:build unix

package overhead

import (
	"syscall"
	"time"
)

// processCPU is the process's CPU time so far, user plus system, all
// threads.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
