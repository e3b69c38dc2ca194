// Package sdktest tests plugins in-process, with no subprocess and no host.
//
// Run drives a workload through Describe, Configure, WARMUP and MEASURE on
// a virtual clock against a fake engine (Options.Engine), and returns a
// Transcript: every request as the engine would receive it, with its
// virtual send time, plus the results delivered to OnFinished. RunGRPC does
// the same through real gRPC (a Unix socket in the test's temp dir, with the
// server and dial options of a real plugin and host, message limits
// included) to also exercise the wire conversions.
//
//	func TestShape(t *testing.T) { // in the plugin's package main
//		tr := sdktest.Run(t, Definition, sdktest.Options{
//			Options: map[string]any{"document-length": 100},
//		})
//		if got := len(tr.Measured()); got != 8 { ... }
//	}
//
// CheckWorkload and CheckExporter are contract checkers every plugin
// should call once: a valid option schema, a clean run with defaults,
// deterministic transcripts, the same behaviour over gRPC, and (for
// exporters) the Write/Finish lifecycle. RunExporter drives an exporter
// like the host does. CheckSharding proves a split exact, CheckFieldErrors
// pins what Configure says of options it refuses; FixedEngine and
// OutOfOrderEngine are fake engines beside DefaultEngine.
package sdktest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"

	"github.com/lmbench/lmbench/sdk/host/fault"
	"github.com/lmbench/lmbench/sdk/host/runloop"
	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/wire"
	"github.com/lmbench/lmbench/sdk/workload"
)

// Message is a chat message with its content resolved to text.
type Message struct {
	Role       string              `json:"role"`
	Content    string              `json:"content"`
	ToolCalls  []protocol.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string              `json:"tool_call_id,omitempty"`
}

// Sent is one request as the engine would receive it.
type Sent struct {
	Phase      string            `json:"phase"`
	ID         string            `json:"id"`
	Offset     time.Duration     `json:"offset_ns"`    // virtual time it was sent
	Scheduled  time.Duration     `json:"scheduled_ns"` // when it was due
	Messages   []Message         `json:"messages,omitempty"`
	Prompt     string            `json:"prompt,omitempty"`
	Completion bool              `json:"completion,omitempty"`
	MaxTokens  int               `json:"max_tokens"`
	IgnoreEOS  bool              `json:"ignore_eos,omitempty"` // exactly MaxTokens asked for
	Tags       map[string]string `json:"tags,omitempty"`
	Tools      []protocol.Tool   `json:"tools,omitempty"`
	// ExpectedCachedTokens is the reuse the workload declared for the
	// request (nil: none declared; the expected-reuse capability), and
	// TargetTier the cache tier it expects the reuse from.
	ExpectedCachedTokens *int   `json:"expected_cached_tokens,omitempty"`
	TargetTier           string `json:"target_tier,omitempty"`
	// Explicit: the workload set Scheduled (Request.At), so it is part of
	// the plan; otherwise it is when the Step that returned it was due.
	Explicit bool `json:"-"`
}

// Reply is what the fake engine answers.
type Reply struct {
	Success      bool
	Error        string
	Text         string
	TTFT         time.Duration
	Latency      time.Duration
	InputTokens  int
	OutputTokens int
	// CachedTokens is what the engine reports as prefix-cache hits.
	CachedTokens int
	// ToolCalls are the calls the answer streamed (reported to a workload
	// that wants response text).
	ToolCalls []protocol.ToolCall
}

// Engine is a fake engine: it decides each request's outcome and timing.
type Engine func(s Sent) Reply

// DefaultEngine answers every request successfully: input tokens = words in
// the prompt, output tokens = max_tokens, TTFT 1 ms per 1000 input words
// (at least 1 ms), 1 ms per output token, text "answer to <id>".
func DefaultEngine(s Sent) Reply {
	in := 0
	for _, m := range s.Messages {
		in += len(strings.Fields(m.Content))
	}
	in += len(strings.Fields(s.Prompt))
	ttft := time.Millisecond * time.Duration(1+in/1000)
	return Reply{
		Success: true, Text: "answer to " + s.ID,
		TTFT: ttft, Latency: ttft + time.Duration(s.MaxTokens)*time.Millisecond,
		InputTokens: in, OutputTokens: s.MaxTokens,
	}
}

// Options configure a run.
type Options struct {
	// Options by name without prefix ("document-length"): int, int64, float64, string, bool or time.Duration.
	Options map[string]any
	// Common settings; zero fields get Seed 42, Model "test-model",
	// KVCacheVolumeGB 100 and TokensPerGB 50000 (the original's test defaults).
	Common workload.Common
	Engine Engine
	// MaxSteps guards against a workload that never finishes (default 1e6).
	MaxSteps int
	// StepLimit is the longest a Step may take, by the real clock, before
	// the run fails as the host would warn of it (0: DefaultStepLimit;
	// negative: no limit). The host cannot send while a Step thinks.
	StepLimit time.Duration
	Logger    *zerolog.Logger
	// HostCapabilities plays an older host: the capabilities it announces
	// (nil: every one this SDK has; empty: none, as protocol minor 0).
	HostCapabilities []string
	// Tokens is the host's tokenizer (e.g. &FakeTokenizer{}); nil plays a
	// host without one (--tokenizer words): Env.Tokenizer is nil.
	Tokens protocol.TokenCounter
}

// Transcript is what a run produced.
type Transcript struct {
	Title    string
	Banner   []workload.Field
	Resolved map[string]any
	Planned  int
	// RequestedRate is what the workload declared (Configured.RequestedRate).
	RequestedRate float64
	Requests      []Sent            // in send order, both phases
	Results       []workload.Result // as delivered to the workload, in order
	// Scores are what a scoring workload (Definition.ScoreKeys) gave the
	// answers, in the order they came back.
	Scores []protocol.Score
	Steps  int
	// Elapsed is the virtual duration of each phase.
	WarmupElapsed, MeasureElapsed time.Duration
}

// Warmup and Measured return the requests of one phase.
func (t *Transcript) Warmup() []Sent   { return t.phase("warmup") }
func (t *Transcript) Measured() []Sent { return t.phase("measure") }

func (t *Transcript) phase(p string) []Sent {
	var out []Sent
	for _, s := range t.Requests {
		if s.Phase == p {
			out = append(out, s)
		}
	}
	return out
}

// MaxInFlight is the most requests of phase that were in flight at once
// on the virtual clock (a request finishing at t frees its slot for one
// sent at t): how a test checks a workload's concurrency limit.
func (t *Transcript) MaxInFlight(phase workload.Phase) int {
	finish := map[string]time.Duration{}
	for _, r := range t.Results {
		if r.Phase == phase {
			finish[r.ID] = r.Finish
		}
	}
	sent := t.phase(phase.String())
	most := 0
	for _, s := range sent {
		n := 0
		for _, r := range sent {
			if r.Offset <= s.Offset && finish[r.ID] > s.Offset {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// IDs returns the request ids of reqs.
func IDs(reqs []Sent) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.ID
	}
	return out
}

func logger(o Options) zerolog.Logger {
	if o.Logger != nil {
		return *o.Logger
	}
	return zerolog.Nop()
}

// DefaultStepLimit is Options.StepLimit's default: long enough that a
// Step doing real work under the race detector on a loaded CI machine
// never reaches it (a 12 MiB answer took 1.1 s there), short enough to
// name a Step that blocks (the host cannot send while a Step thinks).
const DefaultStepLimit = 20 * time.Second

// Run drives def through Describe, Configure, WARMUP and MEASURE and fails
// t on any error.
func Run[O any](t testing.TB, def workload.Definition[O], o Options) *Transcript {
	t.Helper()
	tr, err := RunE(def, o)
	if err != nil {
		t.Fatalf("sdktest.Run(%s): %v", def.Name, err)
	}
	return tr
}

// RunE is Run returning the error (a *ConfigError for rejected options).
// It drives the workload with the host's own interpreter (package
// sdk/host/runloop), so a request the host would reject fails here with
// the same error.
func RunE[O any](def workload.Definition[O], o Options) (*Transcript, error) {
	return drive(context.Background(), def.Name, workload.NewServer(def, logger(o)), o)
}

// RunGRPC is Run through real gRPC (in-process, over a Unix socket, with
// the production message limits): the transcript must equal Run's.
func RunGRPC[O any](t testing.TB, def workload.Definition[O], o Options) *Transcript {
	t.Helper()
	tr, err := drive(context.Background(), def.Name, dialGRPC(t, def, o), o)
	if err != nil {
		t.Fatalf("sdktest.RunGRPC(%s): %v", def.Name, err)
	}
	return tr
}

func dialGRPC[O any](t testing.TB, def workload.Definition[O], o Options) protocol.WorkloadService {
	t.Helper()
	srv := workload.NewServer(def, logger(o))
	return wire.WorkloadClient(grpcConn(t, func(s *grpc.Server) { wire.RegisterWorkload(s, srv) }))
}

// ConfigError carries the field errors Configure returned.
type ConfigError struct{ Errors []protocol.FieldError }

func (e *ConfigError) Error() string {
	var parts []string
	for _, fe := range e.Errors {
		parts = append(parts, fe.Error())
	}
	return strings.Join(parts, "; ")
}

// Fields returns the errors, for comparing with cmp.Diff.
func (e *ConfigError) Fields() []option.FieldError { return e.Errors }

func withDefaults(c workload.Common) workload.Common {
	if c.Seed == 0 {
		c.Seed = 42
	}
	if c.Model == "" {
		c.Model = "test-model"
	}
	if c.KVCacheVolumeGB == 0 {
		c.KVCacheVolumeGB = 100
	}
	if c.TokensPerGB == 0 {
		c.TokensPerGB = 50000
	}
	return c
}

func drive(ctx context.Context, name string, c protocol.WorkloadService, o Options) (*Transcript, error) {
	if o.Engine == nil {
		o.Engine = DefaultEngine
	}
	if o.MaxSteps == 0 {
		o.MaxSteps = 1_000_000
	}
	host := sdktestHost
	if o.HostCapabilities != nil {
		host.Capabilities = o.HostCapabilities
		if len(o.HostCapabilities) == 0 {
			host.ProtocolMinor = 0
		}
	}
	desc, err := c.Describe(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("describe: %w", err)
	}
	opts, err := option.Values(o.Options)
	if err != nil {
		return nil, err
	}
	common := withDefaults(o.Common)
	if protocol.Negotiate(host.Capabilities, desc.Info.Capabilities).Has(protocol.CheckOptions) {
		// As lmbench does before it contacts the engine: no model yet.
		cr, err := c.Configure(ctx, protocol.WorkloadConfig{Options: opts, CheckOnly: true,
			Common: protocol.Common{Seed: common.Seed, KVCacheVolumeGB: common.KVCacheVolumeGB, TokensPerGB: common.TokensPerGB, Shard: common.Shard}})
		if err != nil {
			return nil, fmt.Errorf("check-only configure: %w", err)
		}
		if len(cr.Errors) > 0 {
			return nil, &ConfigError{Errors: cr.Errors}
		}
	}
	cr, err := c.Configure(ctx, protocol.WorkloadConfig{Options: opts, Common: common, Tokens: o.Tokens})
	if err != nil {
		return nil, fmt.Errorf("configure: %w", err)
	}
	if len(cr.Errors) > 0 {
		return nil, &ConfigError{Errors: cr.Errors}
	}
	tr := &Transcript{Title: cr.Title, Banner: cr.Banner, Resolved: map[string]any{}, Planned: int(cr.PlannedRequests), RequestedRate: cr.RequestedRate}
	for k, v := range cr.Resolved {
		tr.Resolved[k] = v
	}
	v := &virtual{engine: o.Engine, tr: tr, base: time.Unix(0, 0)}
	rec := recorder{WorkloadService: c, tr: tr, name: name, steps: &stepTimes{limit: o.StepLimit}}
	if rec.steps.limit == 0 {
		rec.steps.limit = DefaultStepLimit
	}
	res, err := runloop.Run(ctx, runloop.Config[Reply]{
		Workload:     rec,
		Transport:    v,
		Observer:     v,
		Plugin:       name,
		WantsText:    desc.WantsResponseText,
		Capabilities: protocol.Negotiate(host.Capabilities, desc.Info.Capabilities),
		MaxSteps:     o.MaxSteps,
	})
	tr.Steps = res.WarmupSteps + res.MeasureSteps
	tr.WarmupElapsed, tr.MeasureElapsed = res.WarmupElapsed, res.MeasureElapsed
	if err != nil {
		return tr, err
	}
	if l := rec.steps.limit; l > 0 && rec.steps.max > l {
		return tr, fmt.Errorf("%s (sdktest allows %v a Step: Options.StepLimit)", fault.SlowStep(name, rec.steps.max.Seconds()), l)
	}
	return tr, nil
}

// stepTimes is the slowest Step by the real clock, against the limit.
type stepTimes struct{ max, limit time.Duration }

// recorder keeps, in the transcript, every result the workload is told
// of, by whichever call carries it.
type recorder struct {
	protocol.WorkloadService
	tr    *Transcript
	name  string
	steps *stepTimes
}

// Step times the workload's Step and turns a panic in it into the error
// the host gives for a plugin that died during Step, in the same words.
func (r recorder) Step(ctx context.Context, req protocol.StepRequest) (resp protocol.StepResponse, err error) {
	r.tr.Results = append(r.tr.Results, req.Finished...)
	start := time.Now()
	defer func() {
		r.steps.max = max(r.steps.max, time.Since(start))
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: panic: %v", fault.Crashed("workload", r.name, "in-process", "Step"), p)
		}
	}()
	return r.WorkloadService.Step(ctx, req)
}

func (r recorder) OnFinished(ctx context.Context, results []protocol.Result) error {
	r.tr.Results = append(r.tr.Results, results...)
	return r.WorkloadService.OnFinished(ctx, results)
}

// OnFinishedScored passes the scores on when the workload answers them.
func (r recorder) OnFinishedScored(ctx context.Context, results []protocol.Result) ([]protocol.Score, error) {
	sc, ok := r.WorkloadService.(protocol.Scorer)
	if !ok {
		return nil, r.OnFinished(ctx, results)
	}
	r.tr.Results = append(r.tr.Results, results...)
	return sc.OnFinishedScored(ctx, results)
}

// virtual is the transport and observer of a run on virtual time: a
// request finishes when the fake engine says, and Wait jumps to the next
// event.
type virtual struct {
	engine  Engine
	tr      *Transcript
	base    time.Time
	now     time.Duration // since base
	start   time.Time     // of the current phase
	seq     int
	pending []vpending
}

type vpending struct {
	at  time.Duration
	seq int
	f   runloop.Finished[Reply]
}

func (v *virtual) Now() time.Time { return v.base.Add(v.now) }

func (v *virtual) PhaseStarted(_ protocol.Phase, start time.Time) { v.start = start }
func (v *virtual) Sent(*runloop.Outgoing)                         {}
func (v *virtual) Finished(*runloop.Finished[Reply]) error        { return nil }
func (v *virtual) PhaseEnded(protocol.Phase, time.Time)           {}
func (v *virtual) Scored(scores []protocol.Score)                 { v.tr.Scores = append(v.tr.Scores, scores...) }

func (v *virtual) Send(req *runloop.Outgoing) {
	now := v.Now()
	s := Sent{Phase: req.Phase.String(), ID: req.ID, Offset: now.Sub(v.start), Scheduled: req.Due.Sub(v.start), Explicit: req.Explicit,
		Prompt: req.Prompt, Completion: req.Completion, MaxTokens: req.MaxTokens, IgnoreEOS: req.IgnoreEOS, Tags: req.Tags, Tools: req.Tools}
	for _, m := range req.Messages {
		s.Messages = append(s.Messages, Message{Role: m.Role, Content: m.Content, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID})
	}
	if req.HasExpectedCached {
		n := req.ExpectedCachedTokens
		s.ExpectedCachedTokens, s.TargetTier = &n, req.TargetTier
	}
	v.tr.Requests = append(v.tr.Requests, s)
	rep := v.engine(s)
	out := runloop.Outcome{Success: rep.Success, Error: rep.Error, TTFT: -1, Latency: rep.Latency.Seconds(),
		InputTokens: rep.InputTokens, OutputTokens: rep.OutputTokens, CachedTokens: rep.CachedTokens, Finish: now.Add(rep.Latency)}
	if rep.Success {
		out.TTFT, out.Text, out.ToolCalls = rep.TTFT.Seconds(), rep.Text, rep.ToolCalls
	}
	v.seq++
	v.pending = append(v.pending, vpending{at: v.now + rep.Latency, seq: v.seq,
		f: runloop.Finished[Reply]{Req: req, Outcome: out, Measured: rep}})
}

func (v *virtual) Poll() []runloop.Finished[Reply] {
	sort.SliceStable(v.pending, func(i, j int) bool {
		if v.pending[i].at != v.pending[j].at {
			return v.pending[i].at < v.pending[j].at
		}
		return v.pending[i].seq < v.pending[j].seq
	})
	n := 0
	for n < len(v.pending) && v.pending[n].at <= v.now {
		n++
	}
	if n == 0 {
		return nil
	}
	out := make([]runloop.Finished[Reply], n)
	for i := range n {
		out[i] = v.pending[i].f
	}
	v.pending = v.pending[n:]
	return out
}

func (v *virtual) Wait(_ context.Context, until time.Time) []runloop.Finished[Reply] {
	next, ok := time.Duration(0), false
	for _, p := range v.pending {
		if !ok || p.at < next {
			next, ok = p.at, true
		}
	}
	if !until.IsZero() {
		if u := until.Sub(v.base); !ok || u < next {
			next, ok = u, true
		}
	}
	if ok {
		v.now = max(v.now, next)
	}
	return v.Poll()
}

// Abandon has nothing to cancel: a virtual request always finishes.
func (v *virtual) Abandon() {}
