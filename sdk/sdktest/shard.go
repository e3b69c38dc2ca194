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
	var probs []error
	want := map[string]Sent{}
	for _, s := range whole.Measured() {
		want[s.ID] = s
	}
	warm := map[string]Sent{}
	for _, s := range whole.Warmup() {
		warm[s.ID] = s
	}
	seen, warmSeen := map[string]int{}, map[string]bool{}
	planned := 0
	// Only what the workload decides: when a closed-loop request goes out
	// depends on the answers' timing, which sharding changes.
	same := []cmp.Option{cmpopts.EquateEmpty(), cmpopts.IgnoreFields(Sent{}, "Offset", "Scheduled", "Explicit")}
	for i := range n {
		so := o
		so.Common.Shard = protocol.Shard{Index: i, Count: n}
		tr, err := RunE(def, so)
		if err != nil {
			probs = append(probs, fmt.Errorf("shard %d/%d: %w", i, n, err))
			continue
		}
		planned += tr.Planned
		for _, s := range tr.Measured() {
			seen[s.ID]++
			w, ok := want[s.ID]
			switch {
			case !ok:
				probs = append(probs, fmt.Errorf("shard %d/%d sends measured request %q, which the unsharded run does not", i, n, s.ID))
				continue
			case seen[s.ID] == 2:
				probs = append(probs, fmt.Errorf("measured request %q is sent by more than one shard (again by %d/%d)", s.ID, i, n))
			}
			if d := cmp.Diff(w, s, same...); d != "" {
				probs = append(probs, fmt.Errorf("shard %d/%d: request %q differs from the unsharded run's (-unsharded +shard):\n%s", i, n, s.ID, d))
			}
			if w.Explicit && (!s.Explicit || s.Scheduled != w.Scheduled) {
				probs = append(probs, fmt.Errorf("shard %d/%d: request %q is due at %v, the unsharded run's schedule says %v", i, n, s.ID, s.Scheduled, w.Scheduled))
			}
		}
		for _, s := range tr.Warmup() {
			warmSeen[s.ID] = true
			w, ok := warm[s.ID]
			if !ok {
				probs = append(probs, fmt.Errorf("shard %d/%d sends warmup request %q, which the unsharded run does not", i, n, s.ID))
			} else if d := cmp.Diff(w, s, same...); d != "" {
				probs = append(probs, fmt.Errorf("shard %d/%d: warmup request %q differs from the unsharded run's (-unsharded +shard):\n%s", i, n, s.ID, d))
			}
		}
		if again, err := RunE(def, so); err == nil {
			if d := cmp.Diff(tr, again); d != "" {
				probs = append(probs, fmt.Errorf("shard %d/%d: two runs with the same seed differ (-first +second):\n%s", i, n, d))
			}
		}
	}
	var missing, warmMissing []string
	for id := range want {
		if seen[id] == 0 {
			missing = append(missing, id)
		}
	}
	for id := range warm {
		if !warmSeen[id] {
			warmMissing = append(warmMissing, id)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		probs = append(probs, fmt.Errorf("%d measured requests of the unsharded run are sent by no shard: %v", len(missing), clipIDs(missing)))
	}
	if len(warmMissing) > 0 {
		slices.Sort(warmMissing)
		probs = append(probs, fmt.Errorf("%d warmup requests of the unsharded run are sent by no shard: %v", len(warmMissing), clipIDs(warmMissing)))
	}
	if whole.Planned > 0 && planned != whole.Planned {
		probs = append(probs, fmt.Errorf("the shards plan %d measured requests together, the unsharded run %d", planned, whole.Planned))
	}
	return probs
}

func clipIDs(ids []string) []string {
	if len(ids) > 10 {
		return append(ids[:10:10], fmt.Sprintf("… %d more", len(ids)-10))
	}
	return ids
}
