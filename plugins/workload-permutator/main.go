// Command lmbench-workload-long-doc-permutator is the long-doc-permutator workload plugin.
package main

import (
	"errors"

	"github.com/lmbench/lmbench/sdk/workload"
)

// Options are long-doc-permutator's settings (placeholder until the workload lands).
type Options struct{}

// Definition is the plugin; tests drive it with sdktest.
var Definition = workload.Definition[Options]{
	Name:    "long-doc-permutator",
	Prefix:  "ldp",
	Summary: "placeholder",
	Version: "0.1.0",
	New: func(Options, workload.Env) (workload.Workload, error) {
		return nil, errors.New("long-doc-permutator: not built yet")
	},
}

func main() { workload.Serve(Definition) }
