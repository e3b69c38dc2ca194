package workload

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lmbench/lmbench/sdk/handshake"
	"github.com/lmbench/lmbench/sdk/internal/serve"
	"github.com/lmbench/lmbench/sdk/option"
	pluginv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/plugin/v1"
	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
)

// NewServer returns the protocol server for def: what Serve runs in a
// plugin process, and what sdktest runs in-process. Most authors only call
// Serve.
func NewServer[O any](def Definition[O], log zerolog.Logger) workloadv1.WorkloadServiceServer {
	return &server[O]{def: def, log: log}
}

type server[O any] struct {
	def Definition[O]
	log zerolog.Logger

	mu       sync.Mutex
	wl       Workload
	registry *Registry
}

func (s *server[O]) Describe(context.Context, *workloadv1.DescribeRequest) (*workloadv1.DescribeResponse, error) {
	specs, err := option.Specs(s.def.Defaults)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "workload %s: invalid options struct: %v", s.def.Name, err)
	}
	return &workloadv1.DescribeResponse{
		Info:              serve.Info(handshake.WorkloadKind, s.def.Name, s.def.Version, s.def.Summary, s.def.Prefix),
		Options:           specs,
		TagKeys:           s.def.TagKeys,
		WantsResponseText: s.def.WantsResponseText,
	}, nil
}

func (s *server[O]) Configure(_ context.Context, req *workloadv1.ConfigureRequest) (*workloadv1.ConfigureResponse, error) {
	opts, err := option.Decode(s.def.Defaults, req.GetOptions())
	if err != nil {
		return &workloadv1.ConfigureResponse{Errors: option.ProtoErrors(err)}, nil
	}
	c := req.GetCommon()
	reg := NewRegistry()
	env := Env{
		Common: Common{
			Seed:            c.GetSeed(),
			Model:           c.GetModel(),
			KVCacheVolumeGB: c.GetKvCacheVolumeGb(),
			TokensPerGB:     c.GetTokensPerGb(),
			CompletionsMode: c.GetCompletionsMode(),
		},
		Logger:  s.log,
		Content: reg,
	}
	wl, err := s.def.New(opts, env)
	if err != nil {
		return &workloadv1.ConfigureResponse{Errors: option.ProtoErrors(err)}, nil
	}
	s.mu.Lock()
	s.wl, s.registry = wl, reg
	s.mu.Unlock()

	resp := &workloadv1.ConfigureResponse{Resolved: map[string]*pluginv1.OptionValue{}, Title: s.def.Name}
	specs, _ := option.Specs(opts) // the decoded values, in the defaults' shape
	for _, sp := range specs {
		resp.Resolved[sp.Name] = sp.Default
	}
	if r, ok := wl.(Resolver); ok {
		for k, v := range r.Resolved() {
			if ov := option.Value(v); ov != nil {
				resp.Resolved[k] = ov
			}
		}
	}
	if b, ok := wl.(Bannerer); ok {
		for _, f := range b.Banner() {
			resp.Banner = append(resp.Banner, &pluginv1.Field{Label: f.Label, Value: f.Value})
		}
	}
	if p, ok := wl.(Planner); ok {
		resp.PlannedRequests = int64(p.PlannedRequests())
	}
	return resp, nil
}

func (s *server[O]) configured() (Workload, *Registry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wl == nil {
		return nil, nil, status.Error(codes.FailedPrecondition, "Step or OnFinished before a successful Configure")
	}
	return s.wl, s.registry, nil
}

func (s *server[O]) Step(ctx context.Context, req *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
	wl, reg, err := s.configured()
	if err != nil {
		return nil, err
	}
	out, err := wl.Step(ctx, StepInput{
		Phase:    Phase(req.GetPhase()),
		Offset:   time.Duration(req.GetOffsetNs()),
		InFlight: int(req.GetInFlight()),
	})
	if err != nil {
		return nil, status.Errorf(codes.Unknown, "step: %v", err)
	}
	resp := &workloadv1.StepResponse{Requests: make([]*workloadv1.Request, 0, len(out.Requests))}
	// Content registered during Step must travel with (before) the requests using it.
	for _, c := range reg.Drain() {
		resp.Contents = append(resp.Contents, &workloadv1.Content{Id: c.ID, Text: c.Text})
	}
	for i := range out.Requests {
		pr, err := ToProto(&out.Requests[i])
		if err != nil {
			return nil, status.Error(codes.InvalidArgument, err.Error())
		}
		resp.Requests = append(resp.Requests, pr)
	}
	switch out.next {
	case nextNow:
		resp.Next = &workloadv1.StepResponse_WakeAtNs{WakeAtNs: req.GetOffsetNs()}
	case nextWakeAt:
		resp.Next = &workloadv1.StepResponse_WakeAtNs{WakeAtNs: int64(out.at)}
	case nextWakeAtOrFinish:
		resp.Next = &workloadv1.StepResponse_WakeAtOrOnFinishNs{WakeAtOrOnFinishNs: int64(out.at)}
	case nextFinish:
		resp.Next = &workloadv1.StepResponse_WaitForFinish{WaitForFinish: true}
	case nextDone:
		resp.Next = &workloadv1.StepResponse_Done{Done: true}
	}
	return resp, nil
}

// ToProto converts a request to its wire form.
func ToProto(r *Request) (*workloadv1.Request, error) {
	if r.ID == "" {
		return nil, fmt.Errorf("request without id")
	}
	pr := &workloadv1.Request{Id: r.ID, MaxTokens: int32(r.MaxTokens), Tags: r.Tags}
	if r.HasScheduled {
		ns := int64(r.Scheduled)
		pr.ScheduledNs = &ns
	}
	if r.Completion {
		pr.Body = &workloadv1.Request_Completion{Completion: &workloadv1.Completion{Prompt: segments(r.Prompt)}}
		return pr, nil
	}
	if len(r.Messages) == 0 {
		return nil, fmt.Errorf("request %s: chat request without messages", r.ID)
	}
	msgs := make([]*workloadv1.Message, len(r.Messages))
	for i, m := range r.Messages {
		msgs[i] = &workloadv1.Message{Role: m.Role, Content: segments(m.Content)}
	}
	pr.Body = &workloadv1.Request_Chat{Chat: &workloadv1.Chat{Messages: msgs}}
	return pr, nil
}

func segments(segs []Segment) []*workloadv1.Segment {
	out := make([]*workloadv1.Segment, len(segs))
	for i, s := range segs {
		if s.Ref != "" {
			out[i] = &workloadv1.Segment{Kind: &workloadv1.Segment_ContentId{ContentId: s.Ref}}
		} else {
			out[i] = &workloadv1.Segment{Kind: &workloadv1.Segment_Text{Text: s.Text}}
		}
	}
	return out
}

func (s *server[O]) OnFinished(ctx context.Context, req *workloadv1.OnFinishedRequest) (*workloadv1.OnFinishedResponse, error) {
	wl, _, err := s.configured()
	if err != nil {
		return nil, err
	}
	results := make([]Result, len(req.GetResults()))
	for i, r := range req.GetResults() {
		results[i] = Result{
			ID:           r.GetId(),
			Phase:        Phase(r.GetPhase()),
			Success:      r.GetSuccess(),
			Error:        r.GetError(),
			Text:         r.GetText(),
			TTFT:         r.GetTtftS(),
			Latency:      r.GetLatencyS(),
			InputTokens:  int(r.GetInputTokens()),
			OutputTokens: int(r.GetOutputTokens()),
			Finish:       time.Duration(r.GetFinishOffsetNs()),
		}
	}
	if err := wl.OnFinished(ctx, results); err != nil {
		return nil, status.Errorf(codes.Unknown, "on finished: %v", err)
	}
	return &workloadv1.OnFinishedResponse{}, nil
}
