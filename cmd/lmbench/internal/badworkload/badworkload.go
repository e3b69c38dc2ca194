// Package badworkload is a workload that returns an invalid request of
// the kind --bad-mode names, after a valid one (or panics, --bad-mode
// panic): the tests run it through
// sdktest and through the real host (testdata/badplugin) and check that
// both refuse it with the same error.
package badworkload

import (
	"context"

	"github.com/lmbench/lmbench/sdk/workload"
)

// Options: --bad-mode.
type Options struct {
	Mode string `opt:"mode" enum:"max-tokens,empty-prompt,duplicate-id,unregistered,panic" help:"Which invalid request to return."`
}

// Definition is the workload.
var Definition = workload.Definition[Options]{
	Name: "bad", Prefix: "bad", Summary: "Returns an invalid request (for tests)", Version: "0.1.0",
	Defaults: Options{Mode: "max-tokens"},
	New:      func(o Options, _ workload.Env) (workload.Workload, error) { return &bad{o: o}, nil },
}

type bad struct {
	o    Options
	sent bool
}

func (w *bad) Step(_ context.Context, in workload.StepInput) (workload.StepOutput, error) {
	if in.Phase == workload.Warmup || w.sent {
		return workload.Done(), nil
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

func (w *bad) OnFinished(context.Context, []workload.Result) error { return nil }
