// Command lmbench-workload-random-prefill is the random-prefill workload
// plugin: prefill-only requests with distinct prompts, fired all at once
// (or at a request rate, in a constant, Poisson or bursty stream).
package main

import (
	"github.com/lmbench/lmbench/sdk/arrival"
	"github.com/lmbench/lmbench/sdk/workload"
)

// Options are random-prefill's settings; the field values in
// Definition.Defaults are the original's defaults (no rate: all at once).
type Options struct {
	RequestLength int     `opt:"request-length" label:"Request length (tokens)" help:"Token length per request." min:"1"`
	NumRequests   int     `opt:"num-requests" label:"Number of requests" help:"Number of requests to send." min:"1"`
	Rate          float64 `opt:"rate" label:"Request rate (req/s)" help:"Requests per second, the mean rate of --rp-arrival; 0 = infinite: every request at once, as the original." min:"0"`
	Arrival       string  `opt:"arrival" label:"Arrival process" enum:"constant,poisson,gamma" help:"How requests arrive at --rp-rate: constant (request k due at k/rate), poisson (exponential gaps) or gamma (bursty gaps of shape --rp-burstiness, as vLLM's --burstiness); drawn from --seed and, as vLLM does, rescaled so that the last request is due at (n-1)/rate."`
	Burstiness    float64 `opt:"burstiness" label:"Burstiness (gamma shape)" help:"Shape of --rp-arrival gamma, as vLLM's --burstiness: the gaps' coefficient of variation is 1/sqrt(burstiness), so below 1 is burstier than Poisson, above 1 smoother, 1 is Poisson. Must be > 0, and 1 with the other arrivals."`
}

// Definition is the plugin; tests drive it with sdktest.
var Definition = workload.Definition[Options]{
	Name:    "random-prefill",
	Prefix:  "rp",
	Summary: "Prefill-only requests fired simultaneously, or at a rate",
	Version: "0.1.0",
	TagKeys: []string{"index"},
	// Prompts exactly request-length tokens when the host has a tokenizer.
	CountsTokens: true,
	Defaults:     Options{RequestLength: 10000, NumRequests: 50, Arrival: arrival.Constant, Burstiness: 1},
	// Shards by request ordinal (shard.go).
	Shards: true,
	New:    newRandomPrefill,
}

func main() { workload.Serve(Definition) }
