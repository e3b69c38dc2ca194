// Command lmbench-workload-prefix-suffix-tuner is the prefix-suffix-tuner workload plugin.
package main

import (
	"errors"

	"github.com/lmbench/lmbench/sdk/workload"
)

// Options are prefix-suffix-tuner's settings (placeholder until the workload lands).
type Options struct{}

// Definition is the plugin; tests drive it with sdktest.
var Definition = workload.Definition[Options]{
	Name:    "prefix-suffix-tuner",
	Prefix:  "psf",
	Summary: "placeholder",
	Version: "0.1.0",
	New: func(Options, workload.Env) (workload.Workload, error) {
		return nil, errors.New("prefix-suffix-tuner: not built yet")
	},
}

func main() { workload.Serve(Definition) }
