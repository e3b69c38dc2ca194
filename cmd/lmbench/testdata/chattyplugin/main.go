// A workload plugin that prints to stdout and stderr after the handshake,
// outside its logger (as a careless plugin or a library it uses might):
// the host must log each line as a warning naming the plugin, not lose it
// or let it reach its own stdout. It sends --chatty-requests chat requests,
// one at a time, and nothing in warmup.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/lmbench/lmbench/sdk/workload"
)

type options struct {
	Requests int `opt:"requests" help:"Requests to send." min:"1"`
}

type chatty struct {
	opts options
	sent int
}

func (w *chatty) Step(_ context.Context, in workload.StepInput) (workload.StepOutput, error) {
	if in.Phase == workload.Warmup || w.sent == w.opts.Requests {
		return workload.Done(), nil
	}
	if in.InFlight > 0 {
		return workload.WaitForFinish(), nil
	}
	id := "chatty_" + strconv.Itoa(w.sent)
	w.sent++
	return workload.Send(workload.Chat(id, workload.User(workload.Text("Say something."))).WithMaxTokens(2)).WaitForFinish(), nil
}

func (w *chatty) OnFinished(context.Context, []workload.Result) error { return nil }

func main() {
	workload.Serve(workload.Definition[options]{
		Name: "chatty", Prefix: "chatty", Summary: "prints outside its logger", Version: "0.0.1",
		Defaults: options{Requests: 2},
		New: func(o options, _ workload.Env) (workload.Workload, error) {
			// Configure runs New: the handshake is long done.
			fmt.Println("chatty: a line on stdout")
			fmt.Fprintln(os.Stderr, "chatty: a line on stderr")
			return &chatty{opts: o}, nil
		},
	})
}
