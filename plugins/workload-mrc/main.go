// Command lmbench-workload-multi-round-chat is the multi-round-chat workload plugin.
package main

import (
	"errors"

	"github.com/lmbench/lmbench/sdk/workload"
)

// Options are multi-round-chat's settings (placeholder until the workload lands).
type Options struct{}

// Definition is the plugin; tests drive it with sdktest.
var Definition = workload.Definition[Options]{
	Name:    "multi-round-chat",
	Prefix:  "mrc",
	Summary: "placeholder",
	Version: "0.1.0",
	New: func(Options, workload.Env) (workload.Workload, error) {
		return nil, errors.New("multi-round-chat: not built yet")
	},
}

func main() { workload.Serve(Definition) }
