//go:build !unix

package engine

// openFileLimit: this platform has no RLIMIT_NOFILE to read.
func openFileLimit() (uint64, bool) { return 0, false }
