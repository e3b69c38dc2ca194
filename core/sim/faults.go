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
	faultStallAfterHeaders
	faultStallMidStream
	faultHoldAfterDone
	numFaults
)

var faultNames = [numFaults]string{"http_500", "cut_stream", "malformed_sse", "slow_first_token",
	"stall_after_headers", "stall_mid_stream", "hold_after_done"}

// faultSet is the faults one request suffers.
type faultSet [numFaults]bool

// injector decides each request's faults from (seed, arrival number).
type injector struct {
	cfg Faults
	seq atomic.Uint64
}

// next draws the faults of the next request to arrive and says whether it
// is the one that kills the engine (Faults.DieAfter). Every request draws
// a number for every fault, in a fixed order (new faults draw after the
// old ones), so one rate does not shift the others' draws.
func (in *injector) next() (fs faultSet, die bool) {
	n := in.seq.Add(1) - 1
	rng := rand.New(rand.NewPCG(uint64(in.cfg.Seed), n))
	rates := [numFaults]float64{in.cfg.HTTP500, in.cfg.CutStream, in.cfg.MalformedSSE, in.cfg.SlowFirstToken,
		in.cfg.StallAfterHeaders, in.cfg.StallMidStream, in.cfg.HoldAfterDone}
	for f, rate := range rates {
		fs[f] = rng.Float64() < rate
	}
	return fs, in.cfg.DieAfter > 0 && n+1 >= uint64(in.cfg.DieAfter)
}
