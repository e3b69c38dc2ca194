package workload

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/internal/serve"
	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/wire"
)

// NewServer returns def as a protocol service: what Serve answers gRPC
// with in a plugin process, and what sdktest drives in-process. Most
// authors only call Serve.
func NewServer[O any](def Definition[O], log zerolog.Logger) protocol.WorkloadService {
	return &server[O]{def: def, log: log, batchBytes: wire.BatchBytes}
}

type server[O any] struct {
	def        Definition[O]
	log        zerolog.Logger
	batchBytes int // a Step answer larger than this goes out over several Steps

	mu       sync.Mutex
	host     protocol.HostInfo
	wl       Workload
	registry *Registry
	queue    []protocol.StepResponse // the rest of a split answer
	scores   []protocol.Score        // scores not yet sent (the Scores capability)
}

func (s *server[O]) Describe(_ context.Context, host protocol.HostInfo) (protocol.WorkloadDescription, error) {
	specs, err := option.Specs(s.def.Defaults)
	if err != nil {
		return protocol.WorkloadDescription{}, fmt.Errorf("workload %s: invalid options struct: %v", s.def.Name, err)
	}
	s.mu.Lock()
	s.host = host
	s.mu.Unlock()
	return protocol.WorkloadDescription{
		Info:              serve.Info(protocol.WorkloadKind, s.def.Name, s.def.Version, s.def.Summary, s.def.Prefix, s.capabilities()),
		Options:           specs,
		TagKeys:           s.def.TagKeys,
		WantsResponseText: s.def.WantsResponseText,
		ScoreKeys:         s.def.ScoreKeys,
		Deterministic:     s.def.Deterministic,
	}, nil
}

func (s *server[O]) Configure(ctx context.Context, cfg protocol.WorkloadConfig) (protocol.Configured, error) {
	opts, err := option.Decode(s.def.Defaults, cfg.Options)
	if err != nil {
		return protocol.Configured{Errors: option.Errors(err)}, nil
	}
	if cfg.Common.Shard.Sharded() {
		if !s.def.Shards {
			return protocol.Configured{Errors: []protocol.FieldError{{Message: fmt.Sprintf(
				"workload %s cannot be sharded (--shard %s): it does not split its plan (capability %q)",
				s.def.Name, cfg.Common.Shard, protocol.Sharding)}}}, nil
		}
		if err := cfg.Common.Shard.Check(); err != nil {
			return protocol.Configured{Errors: []protocol.FieldError{{Message: "shard: " + err.Error()}}}, nil
		}
	}
	if cfg.CheckOnly {
		if p, ok := any(opts).(Prechecker); ok {
			if err := p.Precheck(); err != nil {
				return protocol.Configured{Errors: option.Errors(err)}, nil
			}
		}
		if p, ok := any(opts).(ShardPrechecker); ok && cfg.Common.Shard.Sharded() {
			if err := p.PrecheckShard(cfg.Common.Shard); err != nil {
				return protocol.Configured{Errors: option.Errors(err)}, nil
			}
		}
		return protocol.Configured{}, nil // nothing configured: a real Configure follows
	}
	reg := NewRegistry()
	s.mu.Lock()
	host := s.host
	s.mu.Unlock()
	env := Env{Common: cfg.Common, Logger: s.log, Content: reg, Host: host, Context: ctx}
	if cfg.Tokens != nil && s.def.CountsTokens && env.HostHas(protocol.Tokenizer) {
		env.Tokenizer = hostTokenizer(cfg.Tokens, env.HostHas(protocol.TokenizeTools))
	}
	wl, err := s.def.New(opts, env)
	if err != nil {
		return protocol.Configured{Errors: option.Errors(err)}, nil
	}
	s.mu.Lock()
	s.wl, s.registry, s.queue = wl, reg, nil
	s.mu.Unlock()

	out := protocol.Configured{Resolved: protocol.Values{}, Title: s.def.Name}
	specs, _ := option.Specs(opts) // the decoded values, in the defaults' shape
	for _, sp := range specs {
		out.Resolved[sp.Name] = sp.Default
	}
	if r, ok := wl.(Resolver); ok {
		for k, v := range r.Resolved() {
			if ov := option.Value(v); ov != nil {
				out.Resolved[k] = ov
			}
		}
	}
	if b, ok := wl.(Bannerer); ok {
		out.Banner = b.Banner()
	}
	if p, ok := wl.(Planner); ok {
		out.PlannedRequests = int64(p.PlannedRequests())
	}
	if r, ok := wl.(Rater); ok && protocol.Negotiate(protocol.WorkloadCapabilities, host.Capabilities).Has(protocol.RequestedRate) {
		out.RequestedRate = r.RequestedRate()
	}
	return out, nil
}

func (s *server[O]) configured() (Workload, *Registry, protocol.Capabilities, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wl == nil {
		return nil, nil, nil, fmt.Errorf("Step or OnFinished before a successful Configure: %w", protocol.ErrOutOfOrder)
	}
	return s.wl, s.registry, protocol.Negotiate(s.capabilities(), s.host.Capabilities), nil
}

// capabilities is what this workload announces: the SDK's, without the
// tokenizer unless the definition counts tokens, nor sharding unless it
// splits its plan, nor scores unless it names some.
func (s *server[O]) capabilities() []string {
	return slices.DeleteFunc(slices.Clone(protocol.WorkloadCapabilities), func(c string) bool {
		return (c == protocol.Tokenizer && !s.def.CountsTokens) || (c == protocol.Sharding && !s.def.Shards) ||
			(c == protocol.Scores && len(s.def.ScoreKeys) == 0)
	})
}

// finished tells the workload of results and, with the Scores
// capability, queues the scores it gives them.
func (s *server[O]) finished(ctx context.Context, wl Workload, caps protocol.Capabilities, results []protocol.Result) error {
	if err := wl.OnFinished(ctx, results); err != nil {
		return fmt.Errorf("on finished: %w", err)
	}
	sc, ok := wl.(Scorer)
	if !ok || !caps.Has(protocol.Scores) {
		return nil
	}
	var scores []protocol.Score
	for i := range results {
		if v := sc.Score(results[i]); len(v) > 0 {
			scores = append(scores, protocol.Score{RequestID: results[i].ID, Phase: results[i].Phase, Values: v})
		}
	}
	s.mu.Lock()
	s.scores = append(s.scores, scores...)
	s.mu.Unlock()
	return nil
}

// takeScores returns the queued scores and forgets them.
func (s *server[O]) takeScores() []protocol.Score {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.scores
	s.scores = nil
	return out
}

func (s *server[O]) Step(ctx context.Context, req protocol.StepRequest) (protocol.StepResponse, error) {
	wl, reg, caps, err := s.configured()
	if err != nil {
		return protocol.StepResponse{}, err
	}
	if len(req.Finished) > 0 {
		if err := s.finished(ctx, wl, caps, req.Finished); err != nil {
			return protocol.StepResponse{}, err
		}
	}
	if resp, ok := s.dequeue(); ok {
		resp.Scores = s.takeScores()
		return resp, nil
	}
	out, err := wl.Step(ctx, StepInput{Phase: req.Phase, Offset: req.Offset, InFlight: req.InFlight})
	if err != nil {
		return protocol.StepResponse{}, fmt.Errorf("step: %w", err)
	}
	// Content registered during Step travels with (before) the requests using it.
	contents, released := reg.take()
	resp := protocol.StepResponse{Contents: contents, Requests: make([]protocol.Request, len(out.Requests))}
	if caps.Has(protocol.ReleaseContent) {
		resp.Released = released // an older host keeps the content; nothing breaks
	}
	for i := range out.Requests {
		r := protocol.Request(out.Requests[i])
		if !caps.Has(protocol.ToolCalls) && usesTools(&r) {
			return protocol.StepResponse{}, fmt.Errorf("request %q uses tool calls, which this lmbench (protocol minor %d) does not send: update lmbench", r.ID, s.host.ProtocolMinor)
		}
		if !caps.Has(protocol.LookAhead) && r.MaxInFlight > 0 {
			return protocol.StepResponse{}, fmt.Errorf("request %q has MaxInFlight, which this lmbench (protocol minor %d) does not hold requests for: check Env.HostHas(protocol.LookAhead), or update lmbench", r.ID, s.host.ProtocolMinor)
		}
		if !caps.Has(protocol.ExpectedReuse) {
			// Informational: an older host has no ledger to put it in.
			r.ExpectedCachedTokens, r.HasExpectedCached, r.TargetTier = 0, false, ""
		}
		if !caps.Has(protocol.IgnoreEOS) {
			r.IgnoreEOS = false // an older host would not send it either
		}
		resp.Requests[i] = r
	}
	switch out.next {
	case nextNow:
		resp.Next = protocol.Next{Kind: protocol.NextWakeAt, At: req.Offset}
	case nextWakeAt:
		resp.Next = protocol.Next{Kind: protocol.NextWakeAt, At: out.at}
	case nextWakeAtOrFinish:
		resp.Next = protocol.Next{Kind: protocol.NextWakeAtOrFinish, At: out.at}
	case nextFinish:
		resp.Next = protocol.Next{Kind: protocol.NextWaitForFinish}
	case nextDone:
		resp.Next = protocol.Next{Kind: protocol.NextDone}
	case nextInFlightBelow:
		if !caps.Has(protocol.LookAhead) {
			return protocol.StepResponse{}, fmt.Errorf("step: WaitForInFlightBelow needs an lmbench with look-ahead (protocol minor %d has none): check Env.HostHas(protocol.LookAhead)", s.host.ProtocolMinor)
		}
		resp.Next = protocol.Next{Kind: protocol.NextWaitForInFlightBelow, InFlightBelow: out.below}
	}
	chunks := split(resp, req, s.batchBytes)
	if len(chunks) > 1 {
		s.mu.Lock()
		s.queue = chunks[1:]
		s.mu.Unlock()
	}
	chunks[0].Scores = s.takeScores()
	return chunks[0], nil
}

func usesTools(r *protocol.Request) bool {
	if len(r.Tools) > 0 {
		return true
	}
	for _, m := range r.Messages {
		if len(m.ToolCalls) > 0 || m.ToolCallID != "" || m.Role == "tool" {
			return true
		}
	}
	return false
}

func (s *server[O]) dequeue() (protocol.StepResponse, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return protocol.StepResponse{}, false
	}
	r := s.queue[0]
	s.queue = s.queue[1:]
	return r, true
}

// split cuts an answer larger than limit into answers of about limit
// bytes, so no gRPC message comes near its size limit: each but the last
// asks to be called again at once, and the last carries the workload's own
// next action and the released content. Content goes before the requests
// that may use it; a single item larger than limit goes alone.
func split(resp protocol.StepResponse, req protocol.StepRequest, limit int) []protocol.StepResponse {
	total := 0
	for _, c := range resp.Contents {
		total += contentSize(c)
	}
	for i := range resp.Requests {
		total += requestSize(&resp.Requests[i])
	}
	if total <= limit {
		return []protocol.StepResponse{resp}
	}
	again := protocol.Next{Kind: protocol.NextWakeAt, At: req.Offset}
	var (
		out  []protocol.StepResponse
		cur  = protocol.StepResponse{Next: again}
		size int
	)
	cut := func(n int) {
		if size > 0 && size+n > limit {
			out = append(out, cur)
			cur, size = protocol.StepResponse{Next: again}, 0
		}
		size += n
	}
	for _, c := range resp.Contents {
		cut(contentSize(c))
		cur.Contents = append(cur.Contents, c)
	}
	for _, r := range resp.Requests {
		cut(requestSize(&r))
		cur.Requests = append(cur.Requests, r)
	}
	cur.Next, cur.Released = resp.Next, resp.Released
	return append(out, cur)
}

func contentSize(c protocol.Content) int { return len(c.ID) + len(c.Text) + 8 }

func requestSize(r *protocol.Request) int {
	n := len(r.ID) + 32
	for k, v := range r.Tags {
		n += len(k) + len(v) + 4
	}
	segs := func(ss []protocol.Segment) {
		for _, s := range ss {
			n += len(s.Text) + len(s.Ref) + 4
		}
	}
	segs(r.Prompt)
	for _, m := range r.Messages {
		n += len(m.Role) + len(m.ToolCallID) + 8
		segs(m.Content)
		for _, tc := range m.ToolCalls {
			n += len(tc.ID) + len(tc.Name) + len(tc.Arguments) + 8
		}
	}
	for _, t := range r.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters) + 8
	}
	return n
}

// OnFinished tells the workload of results; their scores, if any, go
// out with the next Step.
func (s *server[O]) OnFinished(ctx context.Context, results []protocol.Result) error {
	wl, _, caps, err := s.configured()
	if err != nil {
		return err
	}
	return s.finished(ctx, wl, caps, results)
}

// OnFinishedScored is OnFinished answering the scores of these results and
// of any still queued (protocol.Scorer).
func (s *server[O]) OnFinishedScored(ctx context.Context, results []protocol.Result) ([]protocol.Score, error) {
	if err := s.OnFinished(ctx, results); err != nil {
		return nil, err
	}
	return s.takeScores(), nil
}
