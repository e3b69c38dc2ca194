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
// like the host does.
package sdktest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"

	"github.com/lmbench/lmbench/sdk/option"
	pluginv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/plugin/v1"
	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
	"github.com/lmbench/lmbench/sdk/workload"
)

// Message is a chat message with its content resolved to text.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
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
	Tags       map[string]string `json:"tags,omitempty"`
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
	Logger   *zerolog.Logger
}

// Transcript is what a run produced.
type Transcript struct {
	Title    string
	Banner   []workload.Field
	Resolved map[string]any
	Planned  int
	Requests []Sent            // in send order, both phases
	Results  []workload.Result // as delivered to OnFinished
	Steps    int
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

// client is the protocol surface both the in-process server and a gRPC
// client provide.
type client interface {
	Describe(context.Context, *workloadv1.DescribeRequest) (*workloadv1.DescribeResponse, error)
	Configure(context.Context, *workloadv1.ConfigureRequest) (*workloadv1.ConfigureResponse, error)
	Step(context.Context, *workloadv1.StepRequest) (*workloadv1.StepResponse, error)
	OnFinished(context.Context, *workloadv1.OnFinishedRequest) (*workloadv1.OnFinishedResponse, error)
}

type grpcClient struct {
	c workloadv1.WorkloadServiceClient
}

func (g grpcClient) Describe(ctx context.Context, r *workloadv1.DescribeRequest) (*workloadv1.DescribeResponse, error) {
	return g.c.Describe(ctx, r)
}
func (g grpcClient) Configure(ctx context.Context, r *workloadv1.ConfigureRequest) (*workloadv1.ConfigureResponse, error) {
	return g.c.Configure(ctx, r)
}
func (g grpcClient) Step(ctx context.Context, r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
	return g.c.Step(ctx, r)
}
func (g grpcClient) OnFinished(ctx context.Context, r *workloadv1.OnFinishedRequest) (*workloadv1.OnFinishedResponse, error) {
	return g.c.OnFinished(ctx, r)
}

func logger(o Options) zerolog.Logger {
	if o.Logger != nil {
		return *o.Logger
	}
	return zerolog.Nop()
}

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
func RunE[O any](def workload.Definition[O], o Options) (*Transcript, error) {
	return drive(context.Background(), workload.NewServer(def, logger(o)), o)
}

// RunGRPC is Run through real gRPC (in-process, over a Unix socket, with
// the production message limits): the transcript must equal Run's.
func RunGRPC[O any](t testing.TB, def workload.Definition[O], o Options) *Transcript {
	t.Helper()
	c, closeFn := dialGRPC(t, def, o)
	defer closeFn()
	tr, err := drive(context.Background(), c, o)
	if err != nil {
		t.Fatalf("sdktest.RunGRPC(%s): %v", def.Name, err)
	}
	return tr
}

func dialGRPC[O any](t testing.TB, def workload.Definition[O], o Options) (client, func()) {
	t.Helper()
	srv := workload.NewServer(def, logger(o))
	conn := grpcConn(t, func(s *grpc.Server) { workloadv1.RegisterWorkloadServiceServer(s, srv) })
	return grpcClient{workloadv1.NewWorkloadServiceClient(conn)}, func() {}
}

// ConfigError carries the field errors Configure returned.
type ConfigError struct{ Errors []*pluginv1.FieldError }

func (e *ConfigError) Error() string {
	var parts []string
	for _, fe := range e.Errors {
		if fe.Option == "" {
			parts = append(parts, fe.Message)
		} else {
			parts = append(parts, fe.Option+": "+fe.Message)
		}
	}
	return strings.Join(parts, "; ")
}

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

func drive(ctx context.Context, c client, o Options) (*Transcript, error) {
	if o.Engine == nil {
		o.Engine = DefaultEngine
	}
	if o.MaxSteps == 0 {
		o.MaxSteps = 1_000_000
	}
	if _, err := c.Describe(ctx, &workloadv1.DescribeRequest{}); err != nil {
		return nil, fmt.Errorf("describe: %w", err)
	}
	opts, err := optionValues(o.Options)
	if err != nil {
		return nil, err
	}
	cm := withDefaults(o.Common)
	cr, err := c.Configure(ctx, &workloadv1.ConfigureRequest{Options: opts, Common: &workloadv1.Common{
		Seed: cm.Seed, Model: cm.Model, KvCacheVolumeGb: cm.KVCacheVolumeGB,
		TokensPerGb: cm.TokensPerGB, CompletionsMode: cm.CompletionsMode,
	}})
	if err != nil {
		return nil, fmt.Errorf("configure: %w", err)
	}
	if len(cr.GetErrors()) > 0 {
		return nil, &ConfigError{Errors: cr.GetErrors()}
	}
	tr := &Transcript{Title: cr.GetTitle(), Resolved: map[string]any{}, Planned: int(cr.GetPlannedRequests())}
	for _, f := range cr.GetBanner() {
		tr.Banner = append(tr.Banner, workload.Field{Label: f.GetLabel(), Value: f.GetValue()})
	}
	for k, v := range cr.GetResolved() {
		tr.Resolved[k] = option.Interface(v)
	}
	v := &vloop{c: c, o: o, tr: tr, content: map[string]string{}}
	for _, ph := range []workloadv1.Phase{workloadv1.Phase_PHASE_WARMUP, workloadv1.Phase_PHASE_MEASURE} {
		el, err := v.phase(ctx, ph)
		if err != nil {
			return tr, err
		}
		if ph == workloadv1.Phase_PHASE_WARMUP {
			tr.WarmupElapsed = el
		} else {
			tr.MeasureElapsed = el
		}
	}
	return tr, nil
}

type pending struct {
	at  time.Duration
	seq int
	res *workloadv1.Result
}

type vloop struct {
	c       client
	o       Options
	tr      *Transcript
	content map[string]string
}

const never = time.Duration(math.MaxInt64)

// phase runs one phase on virtual time and returns its duration.
func (v *vloop) phase(ctx context.Context, ph workloadv1.Phase) (time.Duration, error) {
	name := map[workloadv1.Phase]string{workloadv1.Phase_PHASE_WARMUP: "warmup", workloadv1.Phase_PHASE_MEASURE: "measure"}[ph]
	var (
		now      time.Duration
		inflight []pending
		seq      int
		nextStep time.Duration // 0: step at once
		onFinish bool
		done     bool
		ids      = map[string]bool{}
	)
	for steps := 0; ; {
		// Deliver everything finished by now, in finish order.
		sort.SliceStable(inflight, func(i, j int) bool {
			if inflight[i].at != inflight[j].at {
				return inflight[i].at < inflight[j].at
			}
			return inflight[i].seq < inflight[j].seq
		})
		n := 0
		for n < len(inflight) && inflight[n].at <= now {
			n++
		}
		if n > 0 {
			batch := make([]*workloadv1.Result, n)
			for i := range n {
				batch[i] = inflight[i].res
				v.tr.Results = append(v.tr.Results, resultOf(inflight[i].res))
			}
			inflight = inflight[n:]
			if _, err := v.c.OnFinished(ctx, &workloadv1.OnFinishedRequest{Results: batch}); err != nil {
				return now, fmt.Errorf("%s: on finished: %w", name, err)
			}
			if onFinish {
				nextStep, onFinish = now, false
			}
		}
		if !done && nextStep <= now {
			steps++
			v.tr.Steps++
			if steps > v.o.MaxSteps {
				return now, fmt.Errorf("%s: more than %d steps without finishing the phase", name, v.o.MaxSteps)
			}
			resp, err := v.c.Step(ctx, &workloadv1.StepRequest{Phase: ph, OffsetNs: int64(now), InFlight: uint32(len(inflight))})
			if err != nil {
				return now, fmt.Errorf("%s: step: %w", name, err)
			}
			for _, ct := range resp.GetContents() {
				v.content[ct.GetId()] = ct.GetText()
			}
			for _, r := range resp.GetRequests() {
				if ids[r.GetId()] {
					return now, fmt.Errorf("%s: duplicate request id %q", name, r.GetId())
				}
				ids[r.GetId()] = true
				s, err := v.resolve(name, now, nextStep, r)
				if err != nil {
					return now, err
				}
				v.tr.Requests = append(v.tr.Requests, s)
				rep := v.o.Engine(s)
				res := &workloadv1.Result{
					Id: s.ID, Phase: ph, Success: rep.Success, Error: rep.Error, Text: rep.Text,
					TtftS: -1, LatencyS: rep.Latency.Seconds(),
					InputTokens: int64(rep.InputTokens), OutputTokens: int64(rep.OutputTokens),
					FinishOffsetNs: int64(now + rep.Latency),
				}
				if rep.Success {
					res.TtftS = rep.TTFT.Seconds()
				} else {
					res.Text = ""
				}
				seq++
				inflight = append(inflight, pending{at: now + rep.Latency, seq: seq, res: res})
			}
			switch nx := resp.GetNext().(type) {
			case *workloadv1.StepResponse_WakeAtNs:
				nextStep, onFinish = max(time.Duration(nx.WakeAtNs), now), false
				if nextStep == now && len(resp.GetRequests()) == 0 && n == 0 {
					// "call me again now" with nothing sent: let virtual time advance a tick
					// so a polling workload cannot spin forever.
					nextStep = now + time.Millisecond
				}
			case *workloadv1.StepResponse_WakeAtOrOnFinishNs:
				nextStep, onFinish = max(time.Duration(nx.WakeAtOrOnFinishNs), now), true
			case *workloadv1.StepResponse_WaitForFinish:
				nextStep, onFinish = never, true
			case *workloadv1.StepResponse_Done:
				done = true
			default:
				return now, fmt.Errorf("%s: step returned no next action", name)
			}
			continue
		}
		if done && len(inflight) == 0 {
			return now, nil
		}
		// Advance virtual time to the next event.
		next := never
		if !done {
			next = nextStep
		}
		if len(inflight) > 0 {
			next = min(next, inflight[0].at)
			for _, p := range inflight {
				next = min(next, p.at)
			}
		}
		if next == never {
			return now, errors.New(name + ": workload waits for a finish with nothing in flight (stalled)")
		}
		now = max(next, now)
	}
}

func (v *vloop) resolve(phase string, now, due time.Duration, r *workloadv1.Request) (Sent, error) {
	s := Sent{Phase: phase, ID: r.GetId(), Offset: now, Scheduled: min(due, now), MaxTokens: int(r.GetMaxTokens()), Tags: r.GetTags()}
	if r.ScheduledNs != nil {
		s.Scheduled = time.Duration(r.GetScheduledNs())
	}
	text := func(segs []*workloadv1.Segment) (string, error) {
		var b strings.Builder
		for _, sg := range segs {
			switch k := sg.GetKind().(type) {
			case *workloadv1.Segment_Text:
				b.WriteString(k.Text)
			case *workloadv1.Segment_ContentId:
				c, ok := v.content[k.ContentId]
				if !ok {
					return "", fmt.Errorf("request %s references unregistered content %q", r.GetId(), k.ContentId)
				}
				b.WriteString(c)
			}
		}
		return b.String(), nil
	}
	switch body := r.GetBody().(type) {
	case *workloadv1.Request_Chat:
		for _, m := range body.Chat.GetMessages() {
			t, err := text(m.GetContent())
			if err != nil {
				return s, err
			}
			s.Messages = append(s.Messages, Message{Role: m.GetRole(), Content: t})
		}
	case *workloadv1.Request_Completion:
		t, err := text(body.Completion.GetPrompt())
		if err != nil {
			return s, err
		}
		s.Prompt, s.Completion = t, true
	default:
		return s, fmt.Errorf("request %s has no body", r.GetId())
	}
	return s, nil
}

func resultOf(r *workloadv1.Result) workload.Result {
	return workload.Result{
		ID: r.GetId(), Phase: workload.Phase(r.GetPhase()), Success: r.GetSuccess(), Error: r.GetError(),
		Text: r.GetText(), TTFT: r.GetTtftS(), Latency: r.GetLatencyS(),
		InputTokens: int(r.GetInputTokens()), OutputTokens: int(r.GetOutputTokens()),
		Finish: time.Duration(r.GetFinishOffsetNs()),
	}
}

// Fields returns the errors as plain values, for comparing with cmp.Diff.
func (e *ConfigError) Fields() []option.FieldError {
	out := make([]option.FieldError, len(e.Errors))
	for i, fe := range e.Errors {
		out[i] = option.FieldError{Option: fe.GetOption(), Message: fe.GetMessage()}
	}
	return out
}
