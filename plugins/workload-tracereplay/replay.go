package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/workload"
)

// Validate checks what needs no file; New reads and lints the trace.
func (o Options) Validate() error {
	var errs []error
	if o.Trace == "" {
		errs = append(errs, option.Errorf("trace", "required: the path of the trace to replay"))
	}
	if !(o.Speedup > 0) || math.IsInf(o.Speedup, 1) {
		errs = append(errs, option.Errorf("speedup", "must be a finite number > 0 (1 = the trace's own pace), got %v", o.Speedup))
	}
	if math.IsInf(o.Start, 1) || math.IsInf(o.Duration, 1) {
		errs = append(errs, option.Errorf("duration", "the window must be finite, got start %v, duration %v", o.Start, o.Duration))
	}
	return errors.Join(errs...)
}

// maxDue bounds a request's due time (a year), far inside time.Duration.
const maxDue = float64(365 * 24 * time.Hour)

// planned is one request to replay.
type planned struct {
	entry
	due    time.Duration // offset in the measure phase
	shared int           // leading blocks an earlier request sent in full
}

type replay struct {
	o       Options
	log     workload.Logger
	format  string
	total   int // requests in the whole trace
	plan    []planned
	prompts *prompts
	shard   workload.Shard // the part of a sharded run this process sends
	next    int            // index into plan, the whole window's

	// With the host's tokenizer (the model's tokens): each planned
	// request's prompt text and its whole chat's tokens, stated with it,
	// and what the chat template adds; nil texts: lengths in words.
	texts    []string
	stated   []int
	template int

	// Measured results, for the reuse check.
	shared           map[string]int // request id -> shared blocks
	heard, ok        int
	cached, expected int64
}

// Precheck reads and lints the trace and selects the window, so a defect
// is reported before lmbench contacts the engine (workload.Prechecker).
func (o Options) Precheck() error {
	_, _, _, err := o.load()
	return err
}

// load reads and lints the trace and selects the window to replay.
func (o Options) load() (entries, sel []entry, format string, err error) {
	entries, format, err = readTrace(o.Trace, o.Format, o.BlockSize)
	if err != nil {
		return nil, nil, "", err
	}
	sel = window(entries, o.Start, o.Duration, o.MaxRequests)
	if len(sel) == 0 {
		return nil, nil, "", option.Errorf("start", "no request of %s (timestamps %s to %s ms) falls in the window from %v s for %v s",
			o.Trace, num(entries[0].timestamp), num(entries[len(entries)-1].timestamp), o.Start, o.Duration)
	}
	return entries, sel, format, nil
}

func newReplay(o Options, env workload.Env) (workload.Workload, error) {
	entries, sel, format, err := o.load()
	if err != nil {
		return nil, err
	}
	if err := o.checkShard(env.Shard, len(sel)); err != nil {
		return nil, err // an older host skips PrecheckShard
	}
	w := &replay{o: o, log: env.Logger, format: format, total: len(entries), prompts: newPrompts(env.Seed, o.BlockSize), shard: env.Shard}
	if format != formatMooncake {
		// No hash ids: every block is the request's own.
		var next int64
		for i := range sel {
			ids := make([]int64, blocks(sel[i].input, o.BlockSize))
			for k := range ids {
				ids[k] = next
				next++
			}
			sel[i].hashIDs = ids
		}
	}
	shared := sharedPrefixes(sel, o.BlockSize)
	t0 := sel[0].timestamp
	w.plan = make([]planned, len(sel))
	w.shared = make(map[string]int, len(sel))
	for i, e := range sel {
		w.shared["line"+strconv.Itoa(e.line)] = shared[i]
		// Milliseconds to nanoseconds, then the speed-up: one rounding.
		ns := math.Round((e.timestamp - t0) * 1e6 / o.Speedup)
		if ns > maxDue {
			return nil, option.Errorf("speedup", "%s:%d is due %.0f hours into the replay at speed-up %s; at most %.0f hours fit: raise --tr-speedup or use a window (--tr-start, --tr-duration)",
				o.Trace, e.line, ns/float64(time.Hour), num(o.Speedup), maxDue/float64(time.Hour))
		}
		due := time.Duration(ns)
		w.plan[i] = planned{entry: e, due: due, shared: shared[i]}
	}
	if env.Tokenizer != nil {
		if err := w.exactPrompts(env.Context, env.Tokenizer); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// PlannedRequests is the shard's part of the window.
func (w *replay) PlannedRequests() int { return w.shard.Owned(len(w.plan)) }

// Resolved reports the format auto chose.
func (w *replay) Resolved() map[string]any { return map[string]any{"format": w.format} }

func (w *replay) Banner() []workload.Field {
	var in, out, sharedTok int
	for _, p := range w.plan {
		in += p.input
		out += p.output
		sharedTok += p.shared * w.o.BlockSize
	}
	last := w.plan[len(w.plan)-1]
	span := time.Duration(math.Round((last.timestamp - w.plan[0].timestamp) * 1e6))
	reuse := "none (no hash ids)"
	if w.format == formatMooncake {
		reuse = fmt.Sprintf("%d of %d input tokens (%.1f%%) in blocks an earlier request sent", sharedTok, in, 100*float64(sharedTok)/float64(in))
	}
	b := []workload.Field{
		{Label: "Trace", Value: w.o.Trace + " (" + w.format + ")"},
		{Label: "Requests", Value: fmt.Sprintf("%d of %d", len(w.plan), w.total)},
		{Label: "Trace span", Value: span.String()},
		{Label: "Replay span", Value: fmt.Sprintf("%v (speed-up %s)", last.due, num(w.o.Speedup))},
		{Label: "Input", Value: fmt.Sprintf("%d tokens, mean %.0f", in, float64(in)/float64(len(w.plan)))},
		{Label: "Output (max_tokens)", Value: fmt.Sprintf("%d tokens, mean %.0f", out, float64(out)/float64(len(w.plan)))},
		{Label: "Block size", Value: strconv.Itoa(w.o.BlockSize) + " tokens per hash id"},
		{Label: "Shared by the trace", Value: reuse},
	}
	if w.texts != nil {
		b = append(b, workload.Field{Label: "Tokenizer",
			Value: fmt.Sprintf("the model's (lengths exact: input_length includes %d tokens of chat template)", w.template)})
	}
	if w.shard.Sharded() {
		b = append(b, workload.ShardField(w.shard, "requests", len(w.plan)))
	}
	return b
}

// Step sends every request due by now, each stamped with its due time,
// and sleeps until the next is due. Nothing is sent in warmup: the trace
// is replayed as it is.
func (w *replay) Step(_ context.Context, in workload.StepInput) (workload.StepOutput, error) {
	switch in.Phase {
	case workload.Warmup:
		return workload.Done(), nil
	case workload.Measure:
		var reqs []workload.Request
		for w.skip(); w.next < len(w.plan) && w.plan[w.next].due <= in.Offset; w.skip() {
			reqs = append(reqs, w.request(w.next))
			w.next++
		}
		if w.next < len(w.plan) {
			return workload.Send(reqs...).WakeAt(w.plan[w.next].due), nil
		}
		return workload.Send(reqs...).Done(), nil
	}
	return workload.StepOutput{}, fmt.Errorf("unknown phase %v", in.Phase)
}

// skip moves past the requests other shards send, so the next one is this
// shard's, due at its own time.
func (w *replay) skip() {
	for w.next < len(w.plan) && !w.shard.Owns(w.next) {
		w.next++
	}
}

// request is the trace's request p: its prompt, max_tokens = its output
// length (exactly, with --tr-ignore-eos), due at its scaled timestamp.
func (w *replay) request(i int) workload.Request {
	p := w.plan[i]
	line := strconv.Itoa(p.line)
	text := ""
	if w.texts != nil {
		text = w.texts[i]
	} else {
		text = w.prompts.text(p.hashIDs, p.input)
	}
	r := workload.Chat("line"+line, workload.User(workload.Text(text))).
		WithMaxTokens(p.output).
		At(p.due).
		Tag("line", line)
	if w.stated != nil {
		r = r.WithPromptTokens(w.stated[i])
	}
	if w.o.IgnoreEOS {
		r = r.WithIgnoreEOS()
	}
	if w.format == formatMooncake {
		r = r.Tag("shared_blocks", strconv.Itoa(p.shared)).
			Tag("first_hash_id", strconv.FormatInt(p.hashIDs[0], 10))
	}
	return r
}

// OnFinished sets the cached tokens the engine reports against the blocks
// the trace shares, once every request is heard of.
func (w *replay) OnFinished(_ context.Context, results []workload.Result) error {
	for _, r := range results {
		if r.Phase != workload.Measure {
			continue
		}
		w.heard++
		if r.Success {
			w.ok++
			w.cached += int64(r.CachedTokens)
			w.expected += int64(w.shared[r.ID] * w.o.BlockSize)
		}
		if w.heard == w.PlannedRequests() && w.format == formatMooncake {
			w.reuse()
		}
	}
	return nil
}

// reuse logs the measured against the expected cache hits.
func (w *replay) reuse() {
	switch {
	case w.ok == 0:
		w.log.Warn().Msg("Trace reuse: no request succeeded, so cache hits cannot be compared with the trace")
	case w.cached == 0 && w.expected > 0:
		w.log.Warn().Msgf("Trace reuse: the trace shares %d tokens in full blocks, but the engine reported no cached tokens (usage.prompt_tokens_details.cached_tokens): it reports none, or its prefix cache is off",
			w.expected)
	case w.expected == 0:
		w.log.Info().Msgf("Trace reuse: the trace shares no full block; the engine reported %d cached tokens", w.cached)
	default:
		w.log.Info().Msgf("Trace reuse: the engine reported %d cached tokens over %d successful requests; the trace shares %d in full %d-token blocks (measured/expected %.1f%%)",
			w.cached, w.ok, w.expected, w.o.BlockSize, 100*float64(w.cached)/float64(w.expected))
	}
}
