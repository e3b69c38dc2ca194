// A workload plugin that speaks protocol v99: the host must refuse it with
// a message naming the path and both versions.
package main

import "github.com/lmbench/lmbench/sdk/workload"

type options struct{}

func main() {
	workload.ServeWithMajor(workload.Definition[options]{
		Name: "future", Prefix: "fut", Summary: "speaks a protocol from the future",
		New: func(options, workload.Env) (workload.Workload, error) { return nil, nil },
	}, 99)
}
