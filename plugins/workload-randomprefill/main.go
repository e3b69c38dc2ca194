// Command lmbench-workload-random-prefill is the random-prefill workload
// plugin: prefill-only requests with distinct prompts, fired all at once.
package main

import "github.com/lmbench/lmbench/sdk/workload"

// Options are random-prefill's settings; the field values in
// Definition.Defaults are the original's defaults.
type Options struct {
	RequestLength int `opt:"request-length" label:"Request length (tokens)" help:"Token length per request." min:"1"`
	NumRequests   int `opt:"num-requests" label:"Number of requests" help:"Number of requests to send." min:"1"`
}

// Definition is the plugin; tests drive it with sdktest.
var Definition = workload.Definition[Options]{
	Name:     "random-prefill",
	Prefix:   "rp",
	Summary:  "Prefill-only requests fired simultaneously",
	Version:  "0.1.0",
	TagKeys:  []string{"index"},
	Defaults: Options{RequestLength: 10000, NumRequests: 50},
	New:      newRandomPrefill,
}

func main() { workload.Serve(Definition) }
