//go:build unix

package engine

import "syscall"

// openFileLimit is the process's open-file limit (the soft RLIMIT_NOFILE,
// which Go raises to the hard limit at start); false if unknown.
func openFileLimit() (uint64, bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, false
	}
	return uint64(rl.Cur), true
}
