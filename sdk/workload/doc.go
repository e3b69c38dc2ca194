// Package workload is how a workload plugin is written: declare options as a
// tagged struct (see package option), implement Step and OnFinished, and
// call Serve from main.
//
//	type Options struct {
//		Requests int `opt:"requests" help:"Requests to send." min:"1"`
//	}
//
//	var Definition = workload.Definition[Options]{
//		Name: "fixed", Prefix: "fx", Summary: "N identical requests",
//		Defaults: Options{Requests: 10},
//		New: func(o Options, env workload.Env) (workload.Workload, error) { return &fixed{o: o}, nil },
//	}
//
//	func main() { workload.Serve(Definition) }
//
// The host owns the clock, the engine sender and all measurement. A
// workload only returns requests from Step (with when to be called next)
// and learns their outcome in OnFinished; both are called from one loop.
// Long text is registered once with Env.Content and referenced by requests,
// so it crosses the process boundary once.
//
// Test a workload in-process with package sdktest.
package workload
