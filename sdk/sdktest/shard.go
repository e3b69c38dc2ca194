package sdktest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/workload"
)

// CheckSharding runs the workload unsharded and as n shards (Common.Shard
// 0/n to n-1/n, the rest of o unchanged) and fails t unless the shards
// split the plan exactly, as lmbench run --shard and lmbench merge rely on:
//
//   - the Definition announces sharding (Shards);
//   - every measured request of the unsharded run is sent by exactly one
//     shard, with the same messages or prompt, max tokens, tags and tools,
//     and no shard sends a measured request the unsharded run does not;
//   - a request the workload scheduled (Request.At) keeps its due time:
//     an open-loop shard sends its part of the global schedule;
//   - the shards' warmup requests are the unsharded run's (a shard may
//     repeat one another's: warmup is not measured);
//   - each shard's Planned is its own part (they sum to the unsharded
//     Planned), and each shard is deterministic like any run.
func CheckSharding[O any](t *testing.T, def workload.Definition[O], o Options, n int) {
	t.Helper()
	for _, err := range shardingProblems(def, o, n) {
		t.Errorf("CheckSharding(%s, %d shards): %v", def.Name, n, err)
	}
}

func shardingProblems[O any](def workload.Definition[O], o Options, n int) []error {
	if !def.Shards {
		return []error{errors.New("Definition.Shards is false: lmbench refuses --shard for this workload")}
	}
	if n < 2 {
		return []error{fmt.Errorf("n = %d: expected at least 2 shards", n)}
	}
	whole, err := RunE(def, o)
	if err != nil {
		return []error{fmt.Errorf("unsharded run: %w", err)}
	}
	c := newShardCheck(whole)
	for i := range n {
		so := o
		so.Common.Shard = protocol.Shard{Index: i, Count: n}
		tr, err := RunE(def, so)
		if err != nil {
			c.probs = append(c.probs, fmt.Errorf("shard %s: %w", so.Common.Shard, err))
			continue
		}
		c.shard(so.Common.Shard, tr)
		if again, err := RunE(def, so); err == nil {
			if d := cmp.Diff(tr, again); d != "" {
				c.probs = append(c.probs, fmt.Errorf("shard %s: two runs with the same seed differ (-first +second):\n%s", so.Common.Shard, d))
			}
		}
	}
	return c.finish(whole.Planned)
}

// shardCheck sets the shards' transcripts against the unsharded run's.
type shardCheck struct {
	want, warm     map[string]Sent // the unsharded run's requests by id
	seen, warmSeen map[string]int  // how many shards sent each
	planned        int             // the shards' Planned, summed
	probs          []error
}

// shardSame compares only what the workload decides: when a closed-loop
// request goes out depends on the answers' timing, which sharding
// changes, and the reuse it expects on what its own shard sent before.
var shardSame = []cmp.Option{cmpopts.EquateEmpty(),
	cmpopts.IgnoreFields(Sent{}, "Offset", "Scheduled", "Explicit", "ExpectedCachedTokens", "TargetTier")}

func newShardCheck(whole *Transcript) *shardCheck {
	c := &shardCheck{want: map[string]Sent{}, warm: map[string]Sent{}, seen: map[string]int{}, warmSeen: map[string]int{}}
	for _, s := range whole.Measured() {
		c.want[s.ID] = s
	}
	for _, s := range whole.Warmup() {
		c.warm[s.ID] = s
	}
	return c
}

func (c *shardCheck) shard(sh protocol.Shard, tr *Transcript) {
	c.planned += tr.Planned
	for _, s := range tr.Measured() {
		c.seen[s.ID]++
		w, ok := c.want[s.ID]
		switch {
		case !ok:
			c.probs = append(c.probs, fmt.Errorf("shard %s sends measured request %q, which the unsharded run does not", sh, s.ID))
			continue
		case c.seen[s.ID] == 2:
			c.probs = append(c.probs, fmt.Errorf("measured request %q is sent by more than one shard (again by %s)", s.ID, sh))
		}
		if d := cmp.Diff(w, s, shardSame...); d != "" {
			c.probs = append(c.probs, fmt.Errorf("shard %s: request %q differs from the unsharded run's (-unsharded +shard):\n%s", sh, s.ID, d))
		}
		if w.Explicit && (!s.Explicit || s.Scheduled != w.Scheduled) {
			c.probs = append(c.probs, fmt.Errorf("shard %s: request %q is due at %v, the unsharded run's schedule says %v", sh, s.ID, s.Scheduled, w.Scheduled))
		}
	}
	for _, s := range tr.Warmup() {
		c.warmSeen[s.ID]++
		w, ok := c.warm[s.ID]
		if !ok {
			c.probs = append(c.probs, fmt.Errorf("shard %s sends warmup request %q, which the unsharded run does not", sh, s.ID))
		} else if d := cmp.Diff(w, s, shardSame...); d != "" {
			c.probs = append(c.probs, fmt.Errorf("shard %s: warmup request %q differs from the unsharded run's (-unsharded +shard):\n%s", sh, s.ID, d))
		}
	}
}

// finish adds the requests no shard sent and a plan that does not add up.
func (c *shardCheck) finish(planned int) []error {
	if missing := unsent(c.want, c.seen); len(missing) > 0 {
		c.probs = append(c.probs, fmt.Errorf("%d measured requests of the unsharded run are sent by no shard: %v", len(missing), clipIDs(missing)))
	}
	if missing := unsent(c.warm, c.warmSeen); len(missing) > 0 {
		c.probs = append(c.probs, fmt.Errorf("%d warmup requests of the unsharded run are sent by no shard: %v", len(missing), clipIDs(missing)))
	}
	if planned > 0 && c.planned != planned {
		c.probs = append(c.probs, fmt.Errorf("the shards plan %d measured requests together, the unsharded run %d", c.planned, planned))
	}
	return c.probs
}

// unsent is the ids of want that seen has not counted, sorted.
func unsent(want map[string]Sent, seen map[string]int) []string {
	var ids []string
	for id := range want {
		if seen[id] == 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

func clipIDs(ids []string) []string {
	if len(ids) > 10 {
		return append(ids[:10:10], fmt.Sprintf("… %d more", len(ids)-10))
	}
	return ids
}
