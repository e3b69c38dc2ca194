// A workload plugin that returns an invalid request (see internal/badworkload).
package main

import (
	"github.com/lmbench/lmbench/cmd/lmbench/internal/badworkload"
	"github.com/lmbench/lmbench/sdk/workload"
)

func main() { workload.Serve(badworkload.Definition) }
