// Command fixedprefix is a complete third-party workload plugin, the one in
// the SDK's "write a plugin in 5 minutes": it sends N chat requests at a
// target rate, all sharing one long prefix that is registered once.
//
// Build and use it:
//
//	go build -o lmbench-workload-fixed-prefix .
//	./lmbench-workload-fixed-prefix describe   # its option schema
//	lmbench run --workload fixed-prefix --fp-qps 4   # with the binary in LMBENCH_PLUGIN_PATH
package main

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/lmbench/lmbench/sdk/workload"
)

// Options become --fp-requests, --fp-qps and --fp-prefix-tokens; the values
// in Definition.Defaults are the defaults.
type Options struct {
	Requests     int     `opt:"requests" help:"Requests to send." min:"1"`
	QPS          float64 `opt:"qps" label:"Requests per second" help:"Target request rate." min:"0.001"`
	PrefixTokens int     `opt:"prefix-tokens" help:"Words in the shared prefix (about one token each)." min:"1"`
}

// Definition is the plugin. It is a package variable so tests can run it
// in-process with sdktest.
var Definition = workload.Definition[Options]{
	Name:     "fixed-prefix",
	Prefix:   "fp",
	Summary:  "N chat requests at a fixed rate sharing one prefix",
	Version:  "0.1.0",
	TagKeys:  []string{"i"},
	Defaults: Options{Requests: 100, QPS: 2, PrefixTokens: 1000},
	// Shards: lmbench run --shard I/N works; New keeps the shard's part.
	Shards: true,
	New: func(o Options, env workload.Env) (workload.Workload, error) {
		// The run's seed, not a shard's: every shard shares the prefix.
		prefix := env.Content.Register("prefix", synthetic(env.Seed, o.PrefixTokens))
		return &fixed{opts: o, prefix: prefix, shard: env.Shard}, nil
	},
}

type fixed struct {
	opts   Options
	prefix workload.Segment
	shard  workload.Shard // the part of a sharded run this process sends
	sent   int            // the next request's ordinal in the whole run
}

// Step sends every request due by now, then sleeps until the next is due.
func (w *fixed) Step(_ context.Context, in workload.StepInput) (workload.StepOutput, error) {
	if in.Phase == workload.Warmup {
		return workload.Done(), nil
	}
	var reqs []workload.Request
	w.skip()
	for ; w.sent < w.opts.Requests && w.due(w.sent) <= in.Offset; w.sent++ {
		if !w.shard.Owns(w.sent) {
			continue // another shard sends it
		}
		n := strconv.Itoa(w.sent)
		question := workload.Text("\nQuestion " + n + ": summarise the text above in one sentence.")
		reqs = append(reqs, workload.Chat("fp_"+n, workload.User(w.prefix, question)).
			WithMaxTokens(32).Tag("i", n).At(w.due(w.sent)))
	}
	if w.skip(); w.sent == w.opts.Requests {
		return workload.Send(reqs...).Done(), nil
	}
	return workload.Send(reqs...).WakeAt(w.due(w.sent)), nil
}

// skip moves past the requests other shards send, so the next wake-up is
// this shard's next due time (the global schedule's, unchanged).
func (w *fixed) skip() {
	for w.sent < w.opts.Requests && !w.shard.Owns(w.sent) {
		w.sent++
	}
}

// due is when request i should go out: i / qps seconds into the phase.
func (w *fixed) due(i int) time.Duration {
	return time.Duration(float64(i) / w.opts.QPS * float64(time.Second))
}

// OnFinished has nothing to do: the host measures every request.
func (w *fixed) OnFinished(context.Context, []workload.Result) error { return nil }

// PlannedRequests lets the host show progress (optional interface).
func (w *fixed) PlannedRequests() int { return w.shard.Owned(w.opts.Requests) }

// synthetic is n pseudo-random words, the same for the same seed.
func synthetic(seed int64, n int) string {
	words := strings.Fields("the cache stores keys and values for every token of a long shared prompt")
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	out := make([]string, n)
	for i := range out {
		out[i] = words[r.IntN(len(words))]
	}
	return strings.Join(out, " ")
}

func main() { workload.Serve(Definition) }
