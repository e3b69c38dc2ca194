package engine

import "math"

// fileMargin is the open files kept for everything but connections: the
// journal, the exporters' and the workload's pipes and sockets, logs,
// the LMCache and metrics clients.
const fileMargin = 64

// unknownLimitConnections is the cap when the open-file limit cannot be
// read.
const unknownLimitConnections = 1024

// DefaultMaxConnections is the connection cap that fits the process's
// open-file limit: 90% of what the limit leaves after a margin for other
// files, (limit - 64) x 0.9, at least 1. Each connection is one open file;
// a process that also serves the connections (the built-in engine) should
// halve it.
func DefaultMaxConnections() int {
	limit, ok := openFileLimit()
	if !ok {
		return unknownLimitConnections
	}
	return connectionsFor(limit)
}

// OpenFileLimit is the process's open-file limit (the soft limit, which
// the Go runtime raises to the hard limit at start); false if unknown.
func OpenFileLimit() (uint64, bool) { return openFileLimit() }

func connectionsFor(limit uint64) int {
	if limit <= fileMargin {
		return 1
	}
	n := float64(limit-fileMargin) * 0.9
	if n >= math.MaxInt32 { // RLIM_INFINITY: no real limit
		return math.MaxInt32
	}
	return max(int(n), 1)
}
