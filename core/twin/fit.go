package twin

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Prefill features, in the order of the regression's columns.
const (
	colOverhead = iota
	colComputed
	colGrowth
	colCPU
	colDisk
	colLatency
	numCols
)

// Fit fits the built-in engine's cost model to runs: the prefill from
// each request's time on the GPU (its first token less when its prefill
// could start, the engine's queues replayed), the decode step from the
// gaps between output chunks against the batch decoding then, and the
// cap on requests served at once from the one that explains the queueing
// best. Parameters the runs cannot tell are named in the profile.
func Fit(runs []Run) (*Profile, error) {
	n := 0
	for _, r := range runs {
		n += len(r.Requests)
	}
	if n < numCols+2 {
		return nil, fmt.Errorf("%d successful requests: too few to fit (want %d or more)", n, numCols+2)
	}
	p := &Profile{Schema: Schema, Requests: n}
	for _, r := range runs {
		p.Runs = append(p.Runs, r.Dir)
		p.Notes = appendOnce(p.Notes, r.TierNote)
	}
	seqs, pre, err := fitPrefill(runs)
	if err != nil {
		return nil, err
	}
	dec, err := fitDecode(runs)
	if err != nil {
		return nil, err
	}
	p.Params = append(pre, dec...)
	p.Params = append(p.Params, seqs)
	p.Residuals = residuals(p.Model(), runs)
	p.Settings = p.settings()
	return p, nil
}

func appendOnce(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// prefillRows are the regression's rows and targets: one per request, its
// features and its time on the GPU, given a cap of seqs (0: none).
func prefillRows(runs []Run, seqs int) (x [][]float64, y []float64) {
	for _, r := range runs {
		start, behind := prefillStarts(r.Requests, seqs)
		for i, q := range r.Requests {
			row := features(q.Job)
			if !behind[i] {
				row[colLatency] = 1
			}
			x = append(x, row)
			y = append(y, q.FirstToken-start[i])
		}
	}
	return x, y
}

func features(j Job) []float64 {
	c := float64(j.computed())
	return []float64{colOverhead: 1, colComputed: c, colGrowth: c * float64(j.Prompt) / 1000, colCPU: float64(j.CachedCPU), colDisk: float64(j.CachedDisk), colLatency: 0}
}

// prefillStarts replays the engine's queues on the measured times: in
// arrival order, a request is admitted once fewer than seqs of those
// before it are unfinished, and its prefill starts once admitted and the
// previous one's first token is out. behind says which started behind
// another's prefill: their start is that one's first token as the client
// saw it, so the client's latency cancels out of their time on the GPU,
// while the others' carries it (from the submission to the engine, and
// back with the first token).
func prefillStarts(qs []Request, seqs int) (start []float64, behind []bool) {
	out := make([]float64, len(qs))
	behind = make([]bool, len(qs))
	var finished []float64 // finish times of those before, sorted
	admitted, gpuFree := math.Inf(-1), math.Inf(-1)
	for i, q := range qs { // qs are in arrival order
		a := max(q.Arrive, admitted)
		if seqs > 0 && i >= seqs {
			a = max(a, finished[i-seqs])
		}
		admitted = a
		out[i], behind[i] = max(a, gpuFree), gpuFree > a
		gpuFree = q.FirstToken
		k := sort.SearchFloat64s(finished, q.Finish)
		finished = append(finished, 0)
		copy(finished[k+1:], finished[k:])
		finished[k] = q.Finish
	}
	return out, behind
}

// maxInFlight is the most requests of r between their submission and
// their end at once.
func maxInFlight(r Run) int {
	type edge struct {
		t float64
		d int
	}
	var es []edge
	for _, q := range r.Requests {
		es = append(es, edge{q.Arrive, 1}, edge{q.Finish, -1})
	}
	sort.Slice(es, func(a, b int) bool { return es[a].t < es[b].t || es[a].t == es[b].t && es[a].d < es[b].d })
	cur, top := 0, 0
	for _, e := range es {
		cur += e.d
		top = max(top, cur)
	}
	return top
}

// fitPrefill fits the prefill's parameters, choosing the cap on requests
// served at once (none, or 1 up to the most ever in flight) whose queues
// leave the smallest residuals. The client's latency gets a column of its
// own (1 for a request whose prefill did not wait for another's), when
// both kinds are there, so that the overhead is the engine's.
func fitPrefill(runs []Run) (Param, []Param, error) {
	top := 0
	for _, r := range runs {
		top = max(top, maxInFlight(r))
	}
	cols := prefillColumns(runs)
	score := func(seqs int) (fit, float64, error) {
		x, y := prefillRows(runs, seqs)
		x = pick(x, cols)
		f, err := robust(x, y)
		if err != nil {
			return f, 0, err
		}
		s := 0.0
		for r := range y {
			s += math.Abs(y[r] - dot(x[r], f.coef))
		}
		return f, s / float64(len(y)), nil
	}
	best, bestScore, err := score(0)
	if err != nil {
		return Param{}, nil, fmt.Errorf("fitting the prefill: %w", err)
	}
	noCap, seqs := bestScore, 0
	scores := map[int]float64{}
	for n := 1; n < top; n++ {
		f, s, err := score(n)
		if err != nil {
			continue
		}
		scores[n] = s
		if s < bestScore {
			best, bestScore, seqs = f, s, n
		}
	}
	return seqsParam(seqs, top, bestScore, noCap, scores), prefillParams(best, cols), nil
}

// seqsParam is the fitted cap: identified when queueing behind it
// explains the first tokens clearly better than no cap; its uncertainty
// spans the caps that explain them within 10% as well.
func seqsParam(seqs, top int, best, noCap float64, scores map[int]float64) Param {
	p := Param{Name: "max-num-seqs", Unit: "requests", Samples: top}
	if seqs == 0 || best > 0.8*noCap {
		p.Why = fmt.Sprintf("never reached: at most %d requests were in flight at once, and no cap below that explains their first tokens better", top)
		return p
	}
	lo, hi := seqs, seqs
	for n, s := range scores {
		if s <= best*1.1 {
			lo, hi = min(lo, n), max(hi, n)
		}
	}
	p.Value, p.Uncertainty, p.Identified = float64(seqs), float64(hi-lo)/2, true
	return p
}

// prefillColumns are the features the runs can tell apart: the overhead
// and the computed tokens always; growth with context when the prompts'
// lengths vary; a tier's load cost when requests loaded from it.
func prefillColumns(runs []Run) []int {
	var cpu, disk, behind, ahead int
	var lens []float64
	for _, r := range runs {
		_, b := prefillStarts(r.Requests, 0)
		for i, q := range r.Requests {
			if b[i] {
				behind++
			} else {
				ahead++
			}
			if q.CachedCPU > 0 {
				cpu++
			}
			if q.CachedDisk > 0 {
				disk++
			}
			if q.computed() > 0 {
				lens = append(lens, float64(q.Prompt))
			}
		}
	}
	cols := []int{colOverhead, colComputed}
	if spread(lens) >= 0.1 {
		cols = append(cols, colGrowth)
	}
	if cpu >= 5 {
		cols = append(cols, colCPU)
	}
	if disk >= 5 {
		cols = append(cols, colDisk)
	}
	if behind >= 5 && ahead >= 5 {
		cols = append(cols, colLatency)
	}
	return cols
}

// spread is the coefficient of variation of v (0 when empty).
func spread(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	m, s := 0.0, 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	if m == 0 {
		return 0
	}
	return math.Sqrt(s/float64(len(v)-1)) / m
}

func pick(x [][]float64, cols []int) [][]float64 {
	out := make([][]float64, len(x))
	for r := range x {
		out[r] = make([]float64, len(cols))
		for i, c := range cols {
			out[r][i] = x[r][c]
		}
	}
	return out
}

// prefillParams are the prefill's parameters from the fit over cols,
// those the runs could not tell named with why.
func prefillParams(f fit, cols []int) []Param {
	ps := []Param{
		{Name: "prefill-per-token", Unit: "s"},
		{Name: "prefill-growth", Unit: "s", Why: "every prompt had about the same length: growth with context is not told apart from the per-token cost"},
		{Name: "prefill-overhead", Unit: "s"},
		{Name: "cpu-load-per-token", Unit: "s", Why: "fewer than 5 requests loaded cached tokens from the CPU tier"},
		{Name: "disk-load-per-token", Unit: "s", Why: "fewer than 5 requests were known to load from the disk tier (the engine's metrics do not tell it from the CPU tier; a workload's target tier does)"},
		{Name: ClientLatency, Unit: "s", Why: "the prefills did not both wait behind others and start at once (5 of each): the client's latency is in prefill-overhead"},
	}
	at := map[int]int{colComputed: 0, colGrowth: 1, colOverhead: 2, colCPU: 3, colDisk: 4, colLatency: 5}
	for i, c := range cols {
		p := &ps[at[c]]
		p.Value, p.Uncertainty, p.Identified, p.Why, p.Samples = f.coef[i], f.stderr[i], true, "", f.n
	}
	return ps
}

// ClientLatency is the parameter that is no engine setting: the time from
// a submission to the engine's queue plus that of the first token back,
// fitted apart from the prefill's overhead; the twin's own serving has
// its own.
const ClientLatency = "client-latency"

// fitDecode fits a decode step against the batch: each gap between two
// output chunks of a request, against the requests decoding (past their
// first token, not finished) as the gap began.
func fitDecode(runs []Run) ([]Param, error) {
	var x [][]float64
	var y []float64
	for _, r := range runs {
		var firsts, ends []float64
		for _, q := range r.Requests {
			firsts, ends = append(firsts, q.FirstToken), append(ends, q.Finish)
		}
		sort.Float64s(firsts)
		sort.Float64s(ends)
		for _, q := range r.Requests {
			for k := 1; k < len(q.Tokens); k++ {
				t := q.Tokens[k-1]
				batch := sort.SearchFloat64s(firsts, math.Nextafter(t, math.Inf(1))) - sort.SearchFloat64s(ends, t)
				x = append(x, []float64{1, float64(max(batch-1, 0))})
				y = append(y, q.Tokens[k]-t)
			}
		}
	}
	base := Param{Name: "decode-per-token", Unit: "s", Why: "no request streamed two output chunks"}
	slope := Param{Name: "decode-per-seq", Unit: "s", Why: "no two requests decoded at once: the step's growth with the batch is not seen"}
	if len(y) < 3 {
		return []Param{base, slope}, nil
	}
	var batches []float64
	for _, r := range x {
		batches = append(batches, r[1])
	}
	if spread(batches) == 0 && batches[0] == 0 {
		f, err := robust(pick(x, []int{0}), y)
		if err != nil {
			return nil, fmt.Errorf("fitting the decode step: %w", err)
		}
		base.Value, base.Uncertainty, base.Identified, base.Why, base.Samples = f.coef[0], f.stderr[0], true, "", f.n
		return []Param{base, slope}, nil
	}
	f, err := robust(x, y)
	if err != nil {
		return nil, errors.Join(errors.New("fitting the decode step"), err)
	}
	base.Value, base.Uncertainty, base.Identified, base.Why, base.Samples = f.coef[0], f.stderr[0], true, "", f.n
	slope.Value, slope.Uncertainty, slope.Identified, slope.Why, slope.Samples = f.coef[1], f.stderr[1], true, "", f.n
	return []Param{base, slope}, nil
}
