package sdktest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lmbench/lmbench/sdk/workload"
)

type shardOptions struct {
	N int `opt:"n" help:"Requests." min:"1"`
}

// paced sends N requests 100 ms apart; split and shift say how wrong its
// sharding is.
type paced struct {
	n, next int
	shard   workload.Shard
	split   bool          // keep only the shard's ordinals
	shift   time.Duration // added to each due time in a shard
}

func (w *paced) Step(_ context.Context, in workload.StepInput) (workload.StepOutput, error) {
	if in.Phase == workload.Warmup {
		return workload.Done(), nil
	}
	var reqs []workload.Request
	for ; w.next < w.n; w.next++ {
		if w.split && !w.shard.Owns(w.next) {
			continue
		}
		due := time.Duration(w.next) * 100 * time.Millisecond
		if w.shard.Sharded() {
			due += w.shift
		}
		reqs = append(reqs, workload.Chat("r"+strconv.Itoa(w.next), workload.User(workload.Text("hi"))).WithMaxTokens(4).At(due))
	}
	return workload.Send(reqs...).Done(), nil
}

func (w *paced) OnFinished(context.Context, []workload.Result) error { return nil }

func pacedDef(shards, split bool, shift time.Duration) workload.Definition[shardOptions] {
	return workload.Definition[shardOptions]{
		Name: "paced", Prefix: "pc", Summary: "paced requests", Version: "0.1.0", Shards: shards,
		Defaults: shardOptions{N: 7},
		New: func(o shardOptions, env workload.Env) (workload.Workload, error) {
			return &paced{n: o.N, shard: env.Shard, split: split, shift: shift}, nil
		},
	}
}

func TestShardingProblems(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		def  workload.Definition[shardOptions]
		want string // "" : no problem
	}{
		{"splits", pacedDef(true, true, 0), ""},
		{"not announced", pacedDef(false, true, 0), "Definition.Shards is false"},
		{"every shard sends all", pacedDef(true, false, 0), "sent by more than one shard"},
		{"schedule moved", pacedDef(true, true, 50*time.Millisecond), "the unsharded run's schedule says"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(messages(shardingProblems(tc.def, Options{}, 3)), "\n")
			switch {
			case tc.want == "" && got != "":
				t.Errorf("problems:\n%s", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("problems %q, want one with %q", got, tc.want)
			}
		})
	}
}

// A shard that drops requests leaves them unsent, and says which.
func TestShardingFindsMissing(t *testing.T) {
	t.Parallel()
	def := pacedDef(true, true, 0)
	inner := def.New
	def.New = func(o shardOptions, env workload.Env) (workload.Workload, error) {
		if env.Shard.Index == 1 {
			o.N = 2 // shard 1 stops early: r4 is sent by nobody
		}
		return inner(o, env)
	}
	got := strings.Join(messages(shardingProblems(def, Options{}, 3)), "\n")
	if !strings.Contains(got, "sent by no shard: [r4]") {
		t.Errorf("problems %q, want r4 reported unsent", got)
	}
}
