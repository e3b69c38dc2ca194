package exporter

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/lmbench/lmbench/sdk/handshake"
	"github.com/lmbench/lmbench/sdk/internal/serve"
	"github.com/lmbench/lmbench/sdk/option"
	exporterv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/exporter/v1"
	pluginv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/plugin/v1"
	"github.com/lmbench/lmbench/sdk/wire"
)

// Serve runs def as a plugin process and exits.
func Serve[O any](def Definition[O]) {
	stdout, stderr := os.Stdout, os.Stderr
	srv := NewServer(def, serve.Logger(stderr))
	os.Exit(serve.Main(serve.Params{
		Kind:    handshake.ExporterKind,
		Name:    def.Name,
		Version: def.Version,
		Describe: func() (proto.Message, error) {
			return srv.Describe(context.Background(), &exporterv1.DescribeRequest{})
		},
		Plugin: &wire.ExporterPlugin{Impl: srv},
	}, os.Args[1:], stdout, stderr))
}

// NewServer returns the protocol server for def (what Serve runs; sdktest
// runs it in-process).
func NewServer[O any](def Definition[O], log zerolog.Logger) exporterv1.ExporterServiceServer {
	return &server[O]{def: def, log: log}
}

type server[O any] struct {
	def Definition[O]
	log zerolog.Logger

	mu       sync.Mutex
	exp      Exporter
	finished bool
}

func (s *server[O]) Describe(context.Context, *exporterv1.DescribeRequest) (*exporterv1.DescribeResponse, error) {
	specs, err := option.Specs(s.def.Defaults)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "exporter %s: invalid options struct: %v", s.def.Name, err)
	}
	return &exporterv1.DescribeResponse{
		Info:    serve.Info(handshake.ExporterKind, s.def.Name, s.def.Version, s.def.Summary, s.def.Prefix),
		Options: specs,
	}, nil
}

func (s *server[O]) Configure(_ context.Context, req *exporterv1.ConfigureRequest) (*exporterv1.ConfigureResponse, error) {
	opts, err := option.Decode(s.def.Defaults, req.GetOptions())
	if err != nil {
		return &exporterv1.ConfigureResponse{Errors: option.ProtoErrors(err)}, nil
	}
	r := req.GetRun()
	env := Env{Logger: s.log, Run: RunMetadata{
		RunID:          r.GetRunId(),
		Workload:       r.GetWorkload(),
		Model:          r.GetModel(),
		OutputDir:      r.GetOutputDir(),
		LMBenchVersion: r.GetLmbenchVersion(),
		TagKeys:        r.GetTagKeys(),
		ConfigJSON:     r.GetConfigJson(),
		Started:        unix(r.GetStartedUnixNs()),
	}}
	exp, err := s.def.New(opts, env)
	if err != nil {
		return &exporterv1.ConfigureResponse{Errors: option.ProtoErrors(err)}, nil
	}
	s.mu.Lock()
	s.exp, s.finished = exp, false // a new exporter starts a new lifecycle
	s.mu.Unlock()
	resp := &exporterv1.ConfigureResponse{Resolved: map[string]*pluginv1.OptionValue{}}
	specs, _ := option.Specs(opts)
	for _, sp := range specs {
		resp.Resolved[sp.Name] = sp.Default
	}
	return resp, nil
}

// state returns the exporter if it may still be used; finish marks it
// finished in the same critical section, so two Finish calls cannot both
// reach the exporter.
func (s *server[O]) state(finish bool) (Exporter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.exp == nil:
		return nil, status.Error(codes.FailedPrecondition, "exporter used before a successful Configure")
	case s.finished:
		return nil, status.Error(codes.FailedPrecondition, "exporter used after Finish")
	}
	s.finished = finish
	return s.exp, nil
}

func (s *server[O]) Write(ctx context.Context, req *exporterv1.WriteRequest) (*exporterv1.WriteResponse, error) {
	exp, err := s.state(false)
	if err != nil {
		return nil, err
	}
	recs := make([]Record, len(req.GetRecords()))
	for i, r := range req.GetRecords() {
		recs[i] = FromProto(r)
	}
	if err := exp.Write(ctx, recs); err != nil {
		return nil, status.Errorf(codes.Unknown, "write: %v", err)
	}
	return &exporterv1.WriteResponse{}, nil
}

func (s *server[O]) Finish(ctx context.Context, req *exporterv1.FinishRequest) (*exporterv1.FinishResponse, error) {
	exp, err := s.state(true)
	if err != nil {
		return nil, err
	}
	sm := req.GetSummary()
	files, err := exp.Finish(ctx, Summary{
		RunID:       sm.GetRunId(),
		JSON:        sm.GetSummaryJson(),
		Total:       sm.GetTotalRequests(),
		Successful:  sm.GetSuccessfulRequests(),
		Failed:      sm.GetFailedRequests(),
		Elapsed:     sm.GetElapsedS(),
		Interrupted: sm.GetInterrupted(),
	})
	if err != nil {
		return nil, status.Errorf(codes.Unknown, "finish: %v", err)
	}
	resp := &exporterv1.FinishResponse{}
	for _, f := range files {
		resp.Files = append(resp.Files, &exporterv1.WrittenFile{Path: f.Path, Rows: f.Rows, Description: f.Description})
	}
	return resp, nil
}

func unix(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

func unixNs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// FromProto converts a wire record.
func FromProto(r *exporterv1.Record) Record {
	return Record{
		RunID:        r.GetRunId(),
		Workload:     r.GetWorkload(),
		Phase:        Phase(r.GetPhase()),
		RequestID:    r.GetRequestId(),
		Tags:         r.GetTags(),
		Success:      r.GetSuccess(),
		Error:        r.GetError(),
		TTFT:         r.GetTtftS(),
		Latency:      r.GetLatencyS(),
		DecodeSpeed:  r.GetDecodeSpeed(),
		ITL:          r.GetItlS(),
		InputTokens:  r.GetInputTokens(),
		OutputTokens: r.GetOutputTokens(),
		CachedTokens: r.GetCachedTokens(),
		Scheduled:    unix(r.GetScheduledUnixNs()),
		Submit:       unix(r.GetSubmitUnixNs()),
		FirstToken:   unix(r.GetFirstTokenUnixNs()),
		Finish:       unix(r.GetFinishUnixNs()),
		Seq:          r.GetSeq(),
	}
}

// ToProto converts a record to its wire form.
func ToProto(r Record) *exporterv1.Record {
	return &exporterv1.Record{
		RunId:            r.RunID,
		Workload:         r.Workload,
		Phase:            exporterv1.Phase(r.Phase),
		RequestId:        r.RequestID,
		Tags:             r.Tags,
		Success:          r.Success,
		Error:            r.Error,
		TtftS:            r.TTFT,
		LatencyS:         r.Latency,
		DecodeSpeed:      r.DecodeSpeed,
		ItlS:             r.ITL,
		InputTokens:      r.InputTokens,
		OutputTokens:     r.OutputTokens,
		CachedTokens:     r.CachedTokens,
		ScheduledUnixNs:  unixNs(r.Scheduled),
		SubmitUnixNs:     unixNs(r.Submit),
		FirstTokenUnixNs: unixNs(r.FirstToken),
		FinishUnixNs:     unixNs(r.Finish),
		Seq:              r.Seq,
	}
}
