package main

import (
	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/workload"
)

// A sharded run (lmbench run --shard I/N) splits multi-round-chat by
// session: shard I warms and drives sessions I, I+N, I+2N, …, so every
// round of a session, which carries the session's earlier answers, goes
// from one shard. Measured request k still belongs to session k mod
// sessions and is due at the global schedule's time k, so the shards
// together send the requested arrival process; a session with an answer
// outstanding holds its own shard's queue only.

// checkSessions refuses a shard that owns none of the n sessions.
func checkSessions(s workload.Shard, n int) error {
	if s.Sharded() && n < s.Count { // every shard refuses, not only those left without
		return option.Errorf("chat-history-length",
			"%d sessions (--kv-cache-volume × tokens per GB / a session's prompt and history) cannot be split among %d shards (--shard %s): each shard needs at least one; raise --kv-cache-volume, lower the lengths or use fewer shards",
			n, s.Count, s)
	}
	return nil
}

// ownedRequests is how many of measured requests 0..k-1 go to the
// shard's sessions: request j is session j mod sessions'.
func ownedRequests(s workload.Shard, k, sessions int) int {
	if !s.Sharded() {
		return k
	}
	return k/sessions*s.Owned(sessions) + s.Owned(k%sessions)
}
