package main

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

// The shards together send the unsharded run's permutations, each once,
// with the same text: lexicographic and sampled lists, in-flight counts
// that divide and that do not, and lengths in the engine's tokens.
func TestSharding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		opts   map[string]any
		shards int
		tokens bool
	}{
		{"lexicographic", map[string]any{"num-contexts": 3, "context-length": 20, "system-prompt-length": 5, "num-inflight-requests": 3}, 3, false},
		{"sampled", map[string]any{"num-contexts": 6, "context-length": 10, "system-prompt-length": 0, "num-permutations": 11, "num-inflight-requests": 5}, 3, false},
		{"two shards", map[string]any{"num-contexts": 4, "context-length": 10, "system-prompt-length": 3, "num-permutations": 9, "num-inflight-requests": 2}, 2, false},
		{"exact", map[string]any{"num-contexts": 3, "context-length": 40, "system-prompt-length": 8, "num-inflight-requests": 4}, 3, true},
		{"exact two shards", map[string]any{"num-contexts": 4, "context-length": 30, "system-prompt-length": 0, "num-permutations": 7, "num-inflight-requests": 2}, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := sdktest.Options{Options: tc.opts}
			if tc.tokens {
				o.Tokens = &sdktest.FakeTokenizer{}
			}
			sdktest.CheckSharding(t, Definition, o, tc.shards)
		})
	}
}

// A shard keeps its share of --ldp-num-inflight-requests in flight, states
// the unsharded run's prompt tokens for its permutations in exact mode,
// and says in the banner which permutations it sends.
func TestShardPart(t *testing.T) {
	t.Parallel()
	opts := map[string]any{"num-contexts": 3, "context-length": 40, "system-prompt-length": 8, "num-permutations": 6, "num-inflight-requests": 5}
	ctx := t.Context()
	direct := func(shard protocol.Shard) *permutator {
		t.Helper()
		wl, err := Definition.New(Options{NumContexts: 3, ContextLength: 40, SystemPromptLength: 8, NumPermutations: 6, NumInflightRequests: 5},
			workload.Env{Common: workload.Common{Seed: 42, Shard: shard}, Content: workload.NewRegistry(), Context: ctx,
				Tokenizer: workload.NewTokenizer(&sdktest.FakeTokenizer{})})
		if err != nil {
			t.Fatal(err)
		}
		return wl.(*permutator)
	}
	whole := direct(protocol.Shard{})
	for i, wantInflight := range []int{2, 2, 1} {
		s := protocol.Shard{Index: i, Count: 3}
		w := direct(s)
		if w.inflight != wantInflight {
			t.Errorf("shard %s: %d in flight, want %d of 5", s, w.inflight, wantInflight)
		}
		for p := range w.perms {
			if s.Owns(p) && w.exact.stated[p] != whole.exact.stated[p] {
				t.Errorf("shard %s: permutation %d states %d prompt tokens, the unsharded run %d", s, p, w.exact.stated[p], whole.exact.stated[p])
			}
		}
		// The most in flight at once: Step refills to the share.
		out, err := w.Step(ctx, workload.StepInput{Phase: workload.Measure})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Requests) != wantInflight {
			t.Errorf("shard %s: first step sends %d requests, want %d", s, len(out.Requests), wantInflight)
		}
	}
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: opts, Common: workload.Common{Shard: protocol.Shard{Index: 1, Count: 3}}})
	i := slices.IndexFunc(tr.Banner, func(f workload.Field) bool { return f.Label == "Shard" })
	if i < 0 {
		t.Fatalf("banner has no Shard line: %v", tr.Banner)
	}
	if want := "1/3: permutations 1, 4 (2 of 6), 2 of 5 in flight"; tr.Banner[i].Value != want {
		t.Errorf("Shard line %q, want %q", tr.Banner[i].Value, want)
	}
	if tr.Planned != 2 {
		t.Errorf("planned %d, want the shard's 2 of 6", tr.Planned)
	}
	var ids []string
	for _, s := range tr.Measured() {
		ids = append(ids, s.ID)
	}
	slices.Sort(ids)
	if d := cmp.Diff([]string{"perm1_req1", "perm4_req4"}, ids); d != "" {
		t.Errorf("shard 1/3's requests (-want +got):\n%s", d)
	}
	if whole := sdktest.Run(t, Definition, sdktest.Options{Options: opts}); slices.ContainsFunc(whole.Banner, func(f workload.Field) bool { return f.Label == "Shard" }) {
		t.Errorf("an unsharded banner has a Shard line: %v", whole.Banner)
	}
}

// More shards than in-flight requests leave one without a slot: the check
// before any traffic says so, naming the option, and so does Configure
// for a host that skips the check.
func TestShardInflightTooFew(t *testing.T) {
	t.Parallel()
	sdktest.CheckRefused(t, Definition, sdktest.Options{
		Options: map[string]any{"num-contexts": 3, "context-length": 10, "num-inflight-requests": 2},
		Common:  workload.Common{Shard: protocol.Shard{Index: 2, Count: 3}},
	}, "num-inflight-requests: 2 in flight cannot be divided among 3 shards (--shard 2/3): it is the whole run's limit, each shard needs at least 1; raise it to 3 or use fewer shards")
	// Shards 0/3 and 1/3 of the same run refuse it too: every shard of a
	// run that cannot start fails alike, so none waits for the others.
	for i := range 2 {
		if _, err := sdktest.RunE(Definition, sdktest.Options{
			Options: map[string]any{"num-contexts": 3, "context-length": 10, "num-inflight-requests": 2},
			Common:  workload.Common{Shard: protocol.Shard{Index: i, Count: 3}},
		}); err == nil {
			t.Errorf("shard %d/3 of a run whose limit cannot be divided: no error", i)
		}
	}
}
