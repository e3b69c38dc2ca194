package workload

import (
	"time"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// An open-loop workload (requests due at times of their own, whatever the
// engine does) hands requests over ahead of their due times on a host
// with the protocol.LookAhead capability: the host holds each until it is
// due and sends it then, so sending never waits for a Step. Each Step
// hands over what falls due within AheadWindow of its offset, at most
// AheadBatch requests (the rest follow in immediate Steps), and asks for
// the next Step once AheadRefill of the window has gone by.
const (
	AheadWindow = time.Second
	AheadRefill = 100 * time.Millisecond
	AheadBatch  = 256
)

// Ahead is how far ahead of a Step's offset an open-loop workload hands
// requests over: AheadWindow on a host with look-ahead, 0 (only what is
// due) on an older one, which would send a request handed early at once.
func (e Env) Ahead() time.Duration {
	if e.HostHas(protocol.LookAhead) {
		return AheadWindow
	}
	return 0
}

// AheadWake is when an open-loop workload that looks ahead by ahead wants
// its next Step, given the due time of the next request it has not handed
// over and the current offset: once AheadRefill of the window has passed
// (at once when the window is not yet full), or at the due time itself
// when ahead is 0.
func AheadWake(ahead, nextDue, now time.Duration) time.Duration {
	if ahead <= 0 {
		return nextDue
	}
	return max(now, nextDue-ahead+AheadRefill)
}
