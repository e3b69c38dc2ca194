package sim

import (
	"math/rand/v2"
	"sync/atomic"
)

// fault kinds, in the order each request draws them.
type fault int

const (
	faultHTTP500 fault = iota
	faultCutStream
	faultMalformedSSE
	faultSlowFirstToken
	numFaults
)

var faultNames = [numFaults]string{"http_500", "cut_stream", "malformed_sse", "slow_first_token"}

// faultSet is the faults one request suffers.
type faultSet [numFaults]bool

// injector decides each request's faults from (seed, arrival number).
type injector struct {
	cfg Faults
	seq atomic.Uint64
}

// next draws the faults of the next request to arrive. Every request draws
// all four numbers, so one rate does not shift the others' draws.
func (in *injector) next() faultSet {
	n := in.seq.Add(1) - 1
	rng := rand.New(rand.NewPCG(uint64(in.cfg.Seed), n))
	rates := [numFaults]float64{in.cfg.HTTP500, in.cfg.CutStream, in.cfg.MalformedSSE, in.cfg.SlowFirstToken}
	var fs faultSet
	for f, rate := range rates {
		fs[f] = rng.Float64() < rate
	}
	return fs
}
