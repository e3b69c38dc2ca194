package sdktest_test

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

type Options struct {
	Requests int `opt:"requests" help:"Requests to send." min:"1"`
}

// every sends one request every 100 ms.
type every struct {
	o    Options
	sent int
}

func (w *every) Step(_ context.Context, in workload.StepInput) (workload.StepOutput, error) {
	if in.Phase == workload.Warmup {
		return workload.Done(), nil
	}
	due := time.Duration(w.sent) * 100 * time.Millisecond
	if in.Offset < due {
		return workload.WakeAt(due), nil
	}
	req := workload.Chat("r"+strconv.Itoa(w.sent), workload.User(workload.Text("hi"))).WithMaxTokens(8).At(due)
	w.sent++
	if w.sent == w.o.Requests {
		return workload.Send(req).Done(), nil
	}
	return workload.Send(req).WakeAt(time.Duration(w.sent) * 100 * time.Millisecond), nil
}

func (w *every) OnFinished(context.Context, []workload.Result) error { return nil }

var definition = workload.Definition[Options]{
	Name: "every", Prefix: "ev", Summary: "A request every 100 ms", Version: "0.1.0",
	Defaults: Options{Requests: 3},
	New:      func(o Options, _ workload.Env) (workload.Workload, error) { return &every{o: o}, nil },
}

// Run drives a workload in-process on a virtual clock against a fake
// engine, with the host's own run loop, and returns what was sent when.
// In a test, call sdktest.Run(t, ...) and sdktest.CheckWorkload(t, ...).
func ExampleRunE() {
	tr, err := sdktest.RunE(definition, sdktest.Options{
		Options: map[string]any{"requests": 3},
		// Each answer takes 30 ms (the default engine answers in a few ms).
		Engine: func(s sdktest.Sent) sdktest.Reply {
			return sdktest.Reply{Success: true, Text: "ok", TTFT: 10 * time.Millisecond, Latency: 30 * time.Millisecond, OutputTokens: 3}
		},
	})
	if err != nil {
		panic(err)
	}
	for _, s := range tr.Measured() {
		fmt.Printf("%s sent at %v, max_tokens %d\n", s.ID, s.Offset, s.MaxTokens)
	}
	fmt.Println("measure phase took", tr.MeasureElapsed)
	// Output:
	// r0 sent at 0s, max_tokens 8
	// r1 sent at 100ms, max_tokens 8
	// r2 sent at 200ms, max_tokens 8
	// measure phase took 230ms
}
