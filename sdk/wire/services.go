package wire

import (
	"context"
	"errors"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	exporterv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/exporter/v1"
	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// The gRPC halves of both services, each adapting the generated code to
// the Go service of package protocol: a client that the host (and sdktest)
// calls as a protocol service, and a server that answers gRPC from a
// protocol service in the plugin process.

// statusOf turns a service's error into the gRPC status the other side
// reads: out-of-order calls are FailedPrecondition, everything else Unknown
// with the error's text.
func statusOf(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	if errors.Is(err, protocol.ErrOutOfOrder) {
		return status.Error(codes.FailedPrecondition, err.Error())
	}
	return status.Error(codes.Unknown, err.Error())
}

// RPCError is a failed call as the client sees it: the gRPC status, which
// says whether the plugin is gone (codes.Unavailable), and the message.
type RPCError struct {
	Status *status.Status
}

func (e *RPCError) Error() string { return e.Status.Message() }

// GRPCStatus lets status.FromError and status.Code read it.
func (e *RPCError) GRPCStatus() *status.Status { return e.Status }

// Unwrap makes a FailedPrecondition errors.Is(err, protocol.ErrOutOfOrder).
func (e *RPCError) Unwrap() error {
	if e.Status.Code() == codes.FailedPrecondition {
		return protocol.ErrOutOfOrder
	}
	return nil
}

func clientErr(err error) error {
	if err == nil {
		return nil
	}
	if st, ok := status.FromError(err); ok {
		return &RPCError{Status: st}
	}
	return err
}

// --- workload ---

// WorkloadClient calls a workload plugin over conn.
func WorkloadClient(conn grpc.ClientConnInterface) protocol.WorkloadService {
	return &workloadClient{c: workloadv1.NewWorkloadServiceClient(conn)}
}

type workloadClient struct {
	c      workloadv1.WorkloadServiceClient
	tokens tokenRelay // answers the plugin's token counts (capability Tokenizer)
}

func (w *workloadClient) Describe(ctx context.Context, host protocol.HostInfo) (protocol.WorkloadDescription, error) {
	r, err := w.c.Describe(ctx, &workloadv1.DescribeRequest{Host: toHost(host)})
	if err != nil {
		return protocol.WorkloadDescription{}, clientErr(err)
	}
	return fromWorkloadDescription(r), nil
}

func (w *workloadClient) Configure(ctx context.Context, cfg protocol.WorkloadConfig) (protocol.Configured, error) {
	if cfg.Tokens != nil {
		if err := w.tokens.start(w.c, cfg.Tokens); err != nil {
			return protocol.Configured{}, clientErr(err)
		}
	}
	r, err := w.c.Configure(ctx, toWorkloadConfig(cfg))
	if err != nil {
		return protocol.Configured{}, clientErr(err)
	}
	return fromConfigured(r), nil
}

func (w *workloadClient) Step(ctx context.Context, req protocol.StepRequest) (protocol.StepResponse, error) {
	r, err := w.c.Step(ctx, toStepRequest(req))
	if err != nil {
		return protocol.StepResponse{}, clientErr(err)
	}
	return fromStepResponse(r), nil
}

func (w *workloadClient) OnFinished(ctx context.Context, results []protocol.Result) error {
	_, err := w.OnFinishedScored(ctx, results)
	return err
}

// OnFinishedScored is OnFinished with the scores the plugin answers
// (protocol.Scorer; none from a plugin before minor 6).
func (w *workloadClient) OnFinishedScored(ctx context.Context, results []protocol.Result) ([]protocol.Score, error) {
	r, err := w.c.OnFinished(ctx, &workloadv1.OnFinishedRequest{Results: toResults(results)})
	if err != nil {
		return nil, clientErr(err)
	}
	return fromScores(r.GetScores()), nil
}

// WorkloadServer answers the workload service's gRPC from impl.
func WorkloadServer(impl protocol.WorkloadService) workloadv1.WorkloadServiceServer {
	return workloadServer{impl: impl, tokens: newStreamTokens()}
}

type workloadServer struct {
	impl   protocol.WorkloadService
	tokens *streamTokens // the host's Tokenize stream, as a TokenCounter
}

func (s workloadServer) Describe(ctx context.Context, r *workloadv1.DescribeRequest) (*workloadv1.DescribeResponse, error) {
	d, err := s.impl.Describe(ctx, fromHost(r.GetHost()))
	if err != nil {
		return nil, statusOf(err)
	}
	return toWorkloadDescription(d), nil
}

func (s workloadServer) Configure(ctx context.Context, r *workloadv1.ConfigureRequest) (*workloadv1.ConfigureResponse, error) {
	cfg := fromWorkloadConfig(r)
	if r.GetTokenizer() {
		cfg.Tokens = s.tokens
	}
	c, err := s.impl.Configure(ctx, cfg)
	if err != nil {
		return nil, statusOf(err)
	}
	return toConfigured(c), nil
}

func (s workloadServer) Step(ctx context.Context, r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
	resp, err := s.impl.Step(ctx, fromStepRequest(r))
	if err != nil {
		return nil, statusOf(err)
	}
	return toStepResponse(resp), nil
}

// Tokenize is the host's end of the tokenizer stream attaching.
func (s workloadServer) Tokenize(stream grpc.BidiStreamingServer[workloadv1.TokenizeAnswer, workloadv1.TokenizeQuery]) error {
	return statusOf(s.tokens.serve(stream))
}

func (s workloadServer) OnFinished(ctx context.Context, r *workloadv1.OnFinishedRequest) (*workloadv1.OnFinishedResponse, error) {
	if sc, ok := s.impl.(protocol.Scorer); ok {
		scores, err := sc.OnFinishedScored(ctx, fromResults(r.GetResults()))
		if err != nil {
			return nil, statusOf(err)
		}
		return &workloadv1.OnFinishedResponse{Scores: toScores(scores)}, nil
	}
	if err := s.impl.OnFinished(ctx, fromResults(r.GetResults())); err != nil {
		return nil, statusOf(err)
	}
	return &workloadv1.OnFinishedResponse{}, nil
}

// --- exporter ---

// ExporterClient calls an exporter plugin over conn.
func ExporterClient(conn grpc.ClientConnInterface) protocol.ExporterService {
	return exporterClient{c: exporterv1.NewExporterServiceClient(conn)}
}

type exporterClient struct {
	c exporterv1.ExporterServiceClient
}

func (e exporterClient) Describe(ctx context.Context, host protocol.HostInfo) (protocol.ExporterDescription, error) {
	r, err := e.c.Describe(ctx, &exporterv1.DescribeRequest{Host: toHost(host)})
	if err != nil {
		return protocol.ExporterDescription{}, clientErr(err)
	}
	return fromExporterDescription(r), nil
}

func (e exporterClient) Configure(ctx context.Context, cfg protocol.ExporterConfig) (protocol.Configured, error) {
	r, err := e.c.Configure(ctx, toExporterConfig(cfg))
	if err != nil {
		return protocol.Configured{}, clientErr(err)
	}
	return fromExporterConfigured(r), nil
}

func (e exporterClient) Write(ctx context.Context, records []protocol.Record) error {
	req := &exporterv1.WriteRequest{Records: make([]*exporterv1.Record, len(records))}
	for i := range records {
		req.Records[i] = toRecord(&records[i])
	}
	_, err := e.c.Write(ctx, req)
	return clientErr(err)
}

func (e exporterClient) Finish(ctx context.Context, summary protocol.Summary) ([]protocol.File, error) {
	r, err := e.c.Finish(ctx, &exporterv1.FinishRequest{Summary: toSummary(summary)})
	if err != nil {
		return nil, clientErr(err)
	}
	return fromFiles(r.GetFiles()), nil
}

// ExporterServer answers the exporter service's gRPC from impl.
func ExporterServer(impl protocol.ExporterService) exporterv1.ExporterServiceServer {
	return exporterServer{impl: impl}
}

type exporterServer struct{ impl protocol.ExporterService }

func (s exporterServer) Describe(ctx context.Context, r *exporterv1.DescribeRequest) (*exporterv1.DescribeResponse, error) {
	d, err := s.impl.Describe(ctx, fromHost(r.GetHost()))
	if err != nil {
		return nil, statusOf(err)
	}
	return toExporterDescription(d), nil
}

func (s exporterServer) Configure(ctx context.Context, r *exporterv1.ConfigureRequest) (*exporterv1.ConfigureResponse, error) {
	c, err := s.impl.Configure(ctx, fromExporterConfig(r))
	if err != nil {
		return nil, statusOf(err)
	}
	return toExporterConfigured(c), nil
}

func (s exporterServer) Write(ctx context.Context, r *exporterv1.WriteRequest) (*exporterv1.WriteResponse, error) {
	recs := make([]protocol.Record, len(r.GetRecords()))
	for i, pr := range r.GetRecords() {
		recs[i] = fromRecord(pr)
	}
	if err := s.impl.Write(ctx, recs); err != nil {
		return nil, statusOf(err)
	}
	return &exporterv1.WriteResponse{}, nil
}

func (s exporterServer) Finish(ctx context.Context, r *exporterv1.FinishRequest) (*exporterv1.FinishResponse, error) {
	files, err := s.impl.Finish(ctx, fromSummary(r.GetSummary()))
	if err != nil {
		return nil, statusOf(err)
	}
	return &exporterv1.FinishResponse{Files: toFiles(files)}, nil
}

// DescribeJSON is what a plugin binary prints for `describe`: its Describe
// answer in the protocol's JSON form (protojson of the DescribeResponse),
// the same a plugin in another language would answer over gRPC.
func DescribeJSON(d any) ([]byte, error) {
	opts := protojson.MarshalOptions{Multiline: true, Indent: "  "}
	switch d := d.(type) {
	case protocol.WorkloadDescription:
		return opts.Marshal(toWorkloadDescription(d))
	case protocol.ExporterDescription:
		return opts.Marshal(toExporterDescription(d))
	}
	return nil, errors.New("wire: DescribeJSON takes a workload or exporter description")
}

// ParseDescribeJSON reads what DescribeJSON wrote (or any plugin's
// describe output), for both kinds: the workload fields are zero for an
// exporter.
func ParseDescribeJSON(b []byte) (protocol.WorkloadDescription, error) {
	var d workloadv1.DescribeResponse
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, &d); err != nil {
		return protocol.WorkloadDescription{}, err
	}
	return fromWorkloadDescription(&d), nil
}

// RegisterWorkload registers impl's gRPC server on s.
func RegisterWorkload(s *grpc.Server, impl protocol.WorkloadService) {
	workloadv1.RegisterWorkloadServiceServer(s, WorkloadServer(impl))
}

// RegisterExporter registers impl's gRPC server on s.
func RegisterExporter(s *grpc.Server, impl protocol.ExporterService) {
	exporterv1.RegisterExporterServiceServer(s, ExporterServer(impl))
}
