// Package badworkload is a workload that returns an invalid request of
// the kind --bad-mode names, after a valid one (or panics, --bad-mode
// panic; or takes SlowStep to answer its second Step, --bad-mode
// slow-step): the tests run it through
// sdktest and through the real host (testdata/badplugin) and check that
// both refuse it with the same error.
package badworkload

import (
	"context"
	"time"

	"github.com/lmbench/lmbench/sdk/workload"
)

// Options: --bad-mode.
type Options struct {
	Mode string `opt:"mode" enum:"max-tokens,empty-prompt,duplicate-id,unregistered,panic,slow-step" help:"Which invalid request to return."`
}

// Definition is the workload.
var Definition = workload.Definition[Options]{
	Name: "bad", Prefix: "bad", Summary: "Returns an invalid request (for tests)", Version: "0.1.0",
	Defaults: Options{Mode: "max-tokens"},
	New:      func(o Options, _ workload.Env) (workload.Workload, error) { return &bad{o: o}, nil },
}

// SlowStep is how long --bad-mode slow-step's second Step takes.
const SlowStep = 1500 * time.Millisecond

type bad struct {
	o     Options
	sent  bool
	steps int
}

func (w *bad) Step(ctx context.Context, in workload.StepInput) (workload.StepOutput, error) {
	if in.Phase == workload.Warmup || w.sent {
		return workload.Done(), nil
	}
	if w.o.Mode == "slow-step" {
		return w.slowStep(ctx)
	}
	w.sent = true
	if w.o.Mode == "panic" {
		panic("badworkload: Step panics on purpose")
	}
	ok := workload.Chat("ok", workload.User(workload.Text("a valid question")))
	var broken workload.Request
	switch w.o.Mode {
	case "max-tokens":
		broken = workload.Chat("q1", workload.User(workload.Text("hi"))).WithMaxTokens(-5)
	case "empty-prompt":
		broken = workload.Completion("q1", workload.Text(""))
	case "duplicate-id":
		broken = workload.Chat("ok", workload.User(workload.Text("again")))
	case "unregistered":
		broken = workload.Chat("q1", workload.User(workload.Segment{Ref: "never-registered"}))
	}
	return workload.Send(ok, broken).Done(), nil
}

// slowStep sends a request, asks to be stepped again 10 ms later, and
// then takes SlowStep before it returns the second request: due at 10 ms,
// it goes out late because of the workload, not the client.
func (w *bad) slowStep(ctx context.Context) (workload.StepOutput, error) {
	w.steps++
	if w.steps == 1 {
		return workload.Send(workload.Chat("first", workload.User(workload.Text("a quick question")))).
			WakeAt(10 * time.Millisecond), nil
	}
	select {
	case <-time.After(SlowStep):
	case <-ctx.Done():
	}
	w.sent = true
	return workload.Send(workload.Chat("late", workload.User(workload.Text("a question thought over")))).Done(), nil
}

func (w *bad) OnFinished(context.Context, []workload.Result) error { return nil }
