package twin

import (
	"container/heap"
	"sort"
)

// Params are the built-in engine's cost model in seconds, the part of
// sim.Config a profile fits: what one prefill and one decode step cost,
// and how many requests are served at once.
type Params struct {
	PrefillPerToken float64 // per computed prompt token
	PrefillGrowth   float64 // per computed token, per 1,000 prompt tokens
	PrefillOverhead float64 // per prefill
	CPULoadPerToken float64 // per cached token loaded from the CPU tier
	DiskLoad        float64 // per cached token loaded from the disk tier
	DecodePerToken  float64 // a decode step alone
	DecodePerSeq    float64 // what each other decoding request adds to a step
	MaxNumSeqs      int     // 0: no cap
}

// Job is one request as the model needs it: when it arrived, its prompt
// (how many tokens, how many of them cached and from which tier) and how
// many output tokens it produced.
type Job struct {
	Arrive       float64 // seconds from any common origin
	Prompt       int
	CachedCPU    int // cached tokens loaded from the CPU tier
	CachedDisk   int
	CachedGPU    int // free
	OutputTokens int
}

// computed is the prompt tokens no tier held.
func (j Job) computed() int { return max(j.Prompt-j.CachedGPU-j.CachedCPU-j.CachedDisk, 0) }

// prefill is the modelled GPU time of j's prefill, as the built-in
// engine's cost model has it (core/sim prefillCost, blending apart).
func (p Params) prefill(j Job) float64 {
	per := p.PrefillPerToken + p.PrefillGrowth*float64(j.Prompt)/1000
	return p.PrefillOverhead + per*float64(j.computed()) + p.CPULoadPerToken*float64(j.CachedCPU) + p.DiskLoad*float64(j.CachedDisk)
}

// Outcome is what the model says of one job: when its prefill started,
// its first token, its last, and every token's time.
type Outcome struct {
	Admitted, PrefillStart, FirstToken, Finish float64
	Tokens                                     []float64
}

// Replay runs jobs through the built-in engine's model as core/sim serves
// them: admitted in arrival order up to MaxNumSeqs at once, prefills one
// at a time in that order, each output token after the first one decode
// step later, a step costing DecodePerToken + DecodePerSeq × (requests
// decoding − 1) as it starts. Outcomes are in the jobs' order.
func Replay(p Params, jobs []Job) []Outcome {
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return jobs[order[a]].Arrive < jobs[order[b]].Arrive })
	r := &replay{p: p, jobs: jobs, out: make([]Outcome, len(jobs)), order: order}
	r.run()
	return r.out
}

// replay is one Replay's state: the event queue, the admission and GPU
// queues, and the batch decoding.
type replay struct {
	p        Params
	jobs     []Job
	out      []Outcome
	order    []int // arrival order
	next     int   // next in order not yet admitted
	inside   int   // admitted, not finished
	gpuFree  float64
	decoding int
	events   eventHeap
	seq      int
}

// event is a request's next token (kind tokenDue) or the GPU finishing a
// prefill; at equal times the earlier scheduled goes first.
type event struct {
	at  float64
	seq int
	job int
}

func (r *replay) push(at float64, job int) {
	r.seq++
	heap.Push(&r.events, event{at: at, seq: r.seq, job: job})
}

func (r *replay) run() {
	r.admit(0)
	for r.events.Len() > 0 {
		ev := heap.Pop(&r.events).(event)
		o := &r.out[ev.job]
		if len(o.Tokens) == 0 {
			// The prefill ended: the first token, and the request decodes.
			r.decoding++
		}
		o.Tokens = append(o.Tokens, ev.at)
		if len(o.Tokens) >= max(r.jobs[ev.job].OutputTokens, 1) {
			o.FirstToken, o.Finish = o.Tokens[0], ev.at
			r.decoding--
			r.inside--
			r.admit(ev.at)
			continue
		}
		step := r.p.DecodePerToken + r.p.DecodePerSeq*float64(max(r.decoding-1, 0))
		r.push(ev.at+step, ev.job)
	}
}

// admit lets in, in arrival order, every waiting request a place is free
// for at now (or at its arrival), queueing its prefill on the GPU.
func (r *replay) admit(now float64) {
	for r.next < len(r.order) && (r.p.MaxNumSeqs <= 0 || r.inside < r.p.MaxNumSeqs) {
		i := r.order[r.next]
		r.next++
		r.inside++
		o := &r.out[i]
		o.Admitted = max(now, r.jobs[i].Arrive)
		o.PrefillStart = max(o.Admitted, r.gpuFree)
		r.gpuFree = o.PrefillStart + r.p.prefill(r.jobs[i])
		r.push(r.gpuFree, i)
	}
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(a, b int) bool {
	if h[a].at != h[b].at {
		return h[a].at < h[b].at
	}
	return h[a].seq < h[b].seq
}
func (h eventHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
