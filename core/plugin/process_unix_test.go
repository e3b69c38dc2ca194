//go:build unix

package plugin

import (
	"errors"
	"syscall"
)

// processGone reports whether no process has this id (signal 0 probes).
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
