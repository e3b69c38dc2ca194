package main

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

// sevenSessions sizes shardOptions to 7 sessions (50 tokens each), so
// neither 2 nor 3 shards divide them evenly.
var sevenSessions = workload.Common{Seed: 9, KVCacheVolumeGB: 1, TokensPerGB: 350}

func shardOptions(kv ...any) map[string]any {
	o := map[string]any{"shared-prompt-length": 20, "chat-history-length": 30, "user-input-length": 5,
		"output-length": 8, "qps": 10.0, "duration": 3.0}
	for i := 0; i < len(kv); i += 2 {
		o[kv[i].(string)] = kv[i+1]
	}
	return o
}

// The shards together send the unsharded run's rounds, each once with the
// same conversation (its session's earlier answers included) and on the
// global schedule's time, for every arrival process, with conversations
// started over, and with exact lengths.
func TestSharding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		opts   map[string]any
		common workload.Common
		tokens bool
	}{
		{name: "constant", opts: shardOptions(), common: sevenSessions},
		{name: "poisson", opts: shardOptions("arrival", "poisson"), common: sevenSessions},
		{name: "gamma", opts: shardOptions("arrival", "gamma", "burstiness", 0.5), common: sevenSessions},
		{name: "max rounds", opts: shardOptions("max-rounds", 2), common: sevenSessions},
		{name: "exact", opts: shardOptions("shared-prompt-length", 40, "chat-history-length", 60), tokens: true,
			common: workload.Common{Seed: 9, KVCacheVolumeGB: 1, TokensPerGB: 800}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Answers come well before the session's next turn, so no
			// session holds the queue and both runs send every round.
			o := sdktest.Options{Options: tc.opts, Common: tc.common, Engine: sdktest.FixedEngine(20 * time.Millisecond)}
			if tc.tokens {
				o.Tokens = &sdktest.FakeTokenizer{}
			}
			for _, n := range []int{2, 3} {
				sdktest.CheckSharding(t, Definition, o, n)
			}
		})
	}
}

// A shard warms and drives its own sessions, plans their rounds, keeps the
// run's rate and says which sessions are its own.
func TestShardPart(t *testing.T) {
	t.Parallel()
	common := sevenSessions
	common.Shard = workload.Shard{Index: 1, Count: 3}
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: shardOptions(), Common: common, Engine: sdktest.FixedEngine(20 * time.Millisecond)})
	if d := cmp.Diff([]string{"warmup_s1", "warmup_s4"}, sdktest.IDs(tr.Warmup())); d != "" {
		t.Errorf("warmup (-want +got):\n%s", d)
	}
	// 30 requests round-robin over 7 sessions: sessions 1 and 4 get
	// requests 1, 4, 8, 11, 15, 18, 22, 25, 29.
	want := []string{"s1_r1", "s4_r4", "s1_r8", "s4_r11", "s1_r15", "s4_r18", "s1_r22", "s4_r25", "s1_r29"}
	if d := cmp.Diff(want, sdktest.IDs(tr.Measured())); d != "" {
		t.Errorf("measured (-want +got):\n%s", d)
	}
	if tr.Planned != len(want) {
		t.Errorf("Planned = %d, want %d", tr.Planned, len(want))
	}
	if tr.RequestedRate != 10 {
		t.Errorf("RequestedRate = %v, want the run's 10", tr.RequestedRate)
	}
	if got, want := tr.Banner[len(tr.Banner)-1], (workload.Field{Label: "Shard", Value: "1/3: sessions 1, 4 (2 of 7)"}); got != want {
		t.Errorf("last banner field %+v, want %+v", got, want)
	}
}

// ownedRequests counts what the walk over the global schedule sends.
func TestOwnedRequests(t *testing.T) {
	t.Parallel()
	for _, sessions := range []int{1, 3, 7} {
		for _, count := range []int{1, 2, 3} {
			for index := range count {
				s := workload.Shard{Index: index, Count: count}
				mine := 0 // of requests 0..k-1, those of the shard's sessions
				for k := range 50 {
					if got := ownedRequests(s, k, sessions); got != mine {
						t.Fatalf("ownedRequests(%v, %d, %d sessions) = %d, want %d", s, k, sessions, got, mine)
					}
					if s.Owns(k % sessions) {
						mine++
					}
				}
			}
		}
	}
}

// A shard with no session is refused, naming the option the session
// count follows from, before any traffic and with an older host.
func TestShardWithoutSessions(t *testing.T) {
	t.Parallel()
	for _, tokens := range []bool{false, true} {
		for _, caps := range [][]string{nil, {}} {
			o := sdktest.Options{Options: shardOptions(), HostCapabilities: caps,
				Common: workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 100, Shard: workload.Shard{Index: 2, Count: 3}}}
			if tokens {
				o.Tokens = &sdktest.FakeTokenizer{}
			}
			_, err := sdktest.RunE(Definition, o)
			var ce *sdktest.ConfigError
			if !errors.As(err, &ce) || len(ce.Fields()) != 1 || ce.Fields()[0].Option != "chat-history-length" {
				t.Errorf("tokens %v, caps %v: got %v, want an error naming chat-history-length", tokens, caps, err)
			}
		}
	}
}
