package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/arrival"
	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/workload"
)

// Validate checks the options with the original's messages, all at once.
func (o Options) Validate() error {
	var errs []error
	if o.RequestLength <= 0 {
		errs = append(errs, option.Errorf("request-length", "request_length must be positive, got %d", o.RequestLength))
	}
	if o.NumRequests < 1 {
		errs = append(errs, option.Errorf("num-requests", "num_requests must be >= 1, got %d", o.NumRequests))
	}
	if o.RequestLength > maxLength {
		errs = append(errs, option.Errorf("request-length", "request_length must be at most %d tokens, got %d", maxLength, o.RequestLength))
	}
	if o.NumRequests > maxRequests {
		errs = append(errs, option.Errorf("num-requests", "num_requests must be at most %d, got %d", maxRequests, o.NumRequests))
	}
	if !(o.Rate >= 0) || math.IsInf(o.Rate, 1) {
		errs = append(errs, option.Errorf("rate", "must be a finite number of requests per second, or 0 for all at once, got %v", o.Rate))
	}
	if o.Rate == 0 && o.Arrival != arrival.Constant {
		errs = append(errs, option.Errorf("arrival", "%s arrivals need a --rp-rate above 0 (0 sends every request at once)", o.Arrival))
	} else {
		// The rate is checked above: 0 is valid here.
		if err := (arrival.Names{Kind: "arrival", Burstiness: "burstiness"}).Check(o.Arrival, o.Rate, o.Burstiness); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 && o.Rate == 0 {
		// Every prompt is resolved and sent at once: the plan must fit.
		if bytes := float64(o.NumRequests) * (float64(o.RequestLength)*bytesPerWord + 16); bytes > maxPlanBytes {
			errs = append(errs, option.Errorf("num-requests",
				"num_requests x request_length = %d x %d tokens is about %.1f GiB of prompt text, all sent at once; at most %d GiB fits: lower --rp-num-requests or --rp-request-length",
				o.NumRequests, o.RequestLength, bytes/(1<<30), maxPlanBytes>>30))
		}
	}
	return errors.Join(errs...)
}

// Bounds on what one run may hold: a longer prompt is past any model's
// context, and the whole burst is in memory at once (the host resolves
// every prompt before sending; "hi " is 3 bytes a token).
const (
	maxLength    = 1 << 24
	maxRequests  = 1 << 20
	maxPlanBytes = 1 << 30
	bytesPerWord = 3
)

// fillerBody is `words` copies of "hi" joined by spaces (at least one).
func fillerBody(words int) string {
	words = max(words, 1)
	return strings.Repeat("hi ", words-1) + "hi"
}

// promptText is prompt i: a distinct header in front of a shared body, so
// no two prompts share a prefix (despite the name, nothing is random).
func promptText(i int, body string) string {
	return "Request " + strconv.Itoa(i) + ": " + body
}

type randomPrefill struct {
	o        Options
	log      zerolog.Logger
	body     string
	schedule *arrival.Schedule // nil: no rate, all at once
	exact    *exactPrompts     // lengths in the engine's tokens; nil: in words, as the original
	ahead    time.Duration     // how far ahead paced prompts are handed over
	shard    workload.Shard    // the part of a sharded run this process sends
	next     int               // the next prompt's ordinal in the whole run
}

func newRandomPrefill(o Options, env workload.Env) (workload.Workload, error) {
	if err := o.checkShard(env.Shard); err != nil {
		return nil, err // an older host skips PrecheckShard
	}
	w := &randomPrefill{o: o, log: env.Logger, body: fillerBody(o.RequestLength - 10), ahead: env.Ahead(), shard: env.Shard}
	if env.Tokenizer != nil {
		e, err := buildExact(o, env)
		if err != nil {
			return nil, err
		}
		w.exact = e
	}
	if o.Rate > 0 {
		s, err := arrival.New(o.Arrival, o.Rate, o.Burstiness, env.Seed)
		if err != nil {
			return nil, err // Validate has checked every parameter
		}
		// The last request is due at (n-1)/rate, as with constant
		// arrivals: the achieved rate is the requested one for every seed.
		s.Normalize(o.NumRequests - 1)
		w.schedule = s
	}
	return w, nil
}

// PlannedRequests is the shard's part of --rp-num-requests.
func (w *randomPrefill) PlannedRequests() int { return w.shard.Owned(w.o.NumRequests) }

// RequestedRate is --rp-rate (0, all at once, sets no rate), the whole
// run's even when sharded.
func (w *randomPrefill) RequestedRate() float64 { return w.o.Rate }

func (w *randomPrefill) Banner() []workload.Field {
	b := []workload.Field{
		{Label: "Requests", Value: strconv.Itoa(w.o.NumRequests)},
		{Label: "Request length", Value: strconv.Itoa(w.o.RequestLength) + " tokens"},
		{Label: "Max output", Value: "1 token"},
	}
	if w.schedule != nil {
		// The original's banner, for the original's burst.
		b = append(b, workload.Field{Label: "Arrival", Value: w.schedule.String()})
	}
	if w.shard.Sharded() {
		b = append(b, workload.ShardField(w.shard, "requests", w.o.NumRequests))
	}
	return b
}

func (w *randomPrefill) Step(_ context.Context, in workload.StepInput) (workload.StepOutput, error) {
	switch in.Phase {
	case workload.Warmup:
		return workload.Done(), nil // no warmup: every prompt must be a cache miss
	case workload.Measure:
		if w.schedule != nil {
			return w.paced(in.Offset), nil
		}
		return w.dispatch(), nil
	}
	return workload.StepOutput{}, fmt.Errorf("unknown phase %v", in.Phase)
}

// dispatch sends every prompt at once (max_tokens 1: prefill only), as
// the original fires them all together (no --rp-rate). (The SDK spreads an answer too
// large for one message over several immediate Steps.)
func (w *randomPrefill) dispatch() workload.StepOutput {
	reqs := make([]workload.Request, 0, w.shard.Owned(w.o.NumRequests))
	for ; w.next < w.o.NumRequests; w.next++ {
		if w.shard.Owns(w.next) {
			reqs = append(reqs, w.request(w.next))
		}
	}
	w.log.Info().Msgf("Dispatched all %d requests", len(reqs))
	return workload.Send(reqs...).Done()
}

// paced hands over every prompt due by now and, on a host with
// look-ahead, those due within the look-ahead window (the host sends each
// when due), each stamped with its due time; then it sleeps until the
// window needs refilling (or the next is due).
func (w *randomPrefill) paced(now time.Duration) workload.StepOutput {
	var reqs []workload.Request
	w.skip()
	for ; w.next < w.o.NumRequests && w.schedule.Due(w.next) <= now+w.ahead; w.skip() {
		if w.ahead > 0 && len(reqs) == workload.AheadBatch {
			return workload.Send(reqs...).WakeAt(now)
		}
		reqs = append(reqs, w.request(w.next).At(w.schedule.Due(w.next)))
		w.next++
	}
	if w.next < w.o.NumRequests {
		return workload.Send(reqs...).WakeAt(workload.AheadWake(w.ahead, w.schedule.Due(w.next), now))
	}
	w.log.Info().Msgf("Dispatched all %d requests", w.shard.Owned(w.o.NumRequests))
	return workload.Send(reqs...).Done()
}

// skip moves past the prompts other shards send, so the next one is this
// shard's, due at its time in the global schedule.
func (w *randomPrefill) skip() {
	for w.next < w.o.NumRequests && !w.shard.Owns(w.next) {
		w.next++
	}
}

// request is prompt i, prefill only (max_tokens 1).
func (w *randomPrefill) request(i int) workload.Request {
	text, stated := promptText(i, w.body), 0
	if w.exact != nil {
		text, stated = w.exact.prompt(i)
	}
	req := workload.Chat("prefill_"+strconv.Itoa(i), workload.User(workload.Text(text))).
		WithMaxTokens(1).
		Tag("index", strconv.Itoa(i))
	if stated > 0 {
		req = req.WithPromptTokens(stated)
	}
	return req
}

// OnFinished needs nothing: the host measures every request.
func (w *randomPrefill) OnFinished(context.Context, []workload.Result) error { return nil }
