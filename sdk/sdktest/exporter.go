package sdktest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"

	"github.com/lmbench/lmbench/sdk/exporter"
	"github.com/lmbench/lmbench/sdk/option"
	exporterv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/exporter/v1"
	pluginv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/plugin/v1"
)

// RunExporter drives def in-process the way the host does: Describe,
// Configure with opts (names without prefix, Go values as in
// Options.Options) and run, one Write per batch, then Finish with summary.
// An empty run.OutputDir becomes a fresh t.TempDir(). It returns the files
// Finish reported, or the first error (a *ConfigError for rejected
// options).
func RunExporter[O any](t testing.TB, def exporter.Definition[O], opts map[string]any, run exporter.RunMetadata, batches [][]exporter.Record, summary exporter.Summary) ([]exporter.File, error) {
	t.Helper()
	if run.OutputDir == "" {
		run.OutputDir = t.TempDir()
	}
	return driveExporter(context.Background(), exporter.NewServer(def, zerolog.Nop()), opts, run, batches, summary)
}

// exporterClient is the protocol surface both the in-process server and a
// gRPC client provide.
type exporterClient interface {
	Describe(context.Context, *exporterv1.DescribeRequest) (*exporterv1.DescribeResponse, error)
	Configure(context.Context, *exporterv1.ConfigureRequest) (*exporterv1.ConfigureResponse, error)
	Write(context.Context, *exporterv1.WriteRequest) (*exporterv1.WriteResponse, error)
	Finish(context.Context, *exporterv1.FinishRequest) (*exporterv1.FinishResponse, error)
}

type grpcExporterClient struct {
	c exporterv1.ExporterServiceClient
}

func (g grpcExporterClient) Describe(ctx context.Context, r *exporterv1.DescribeRequest) (*exporterv1.DescribeResponse, error) {
	return g.c.Describe(ctx, r)
}
func (g grpcExporterClient) Configure(ctx context.Context, r *exporterv1.ConfigureRequest) (*exporterv1.ConfigureResponse, error) {
	return g.c.Configure(ctx, r)
}
func (g grpcExporterClient) Write(ctx context.Context, r *exporterv1.WriteRequest) (*exporterv1.WriteResponse, error) {
	return g.c.Write(ctx, r)
}
func (g grpcExporterClient) Finish(ctx context.Context, r *exporterv1.FinishRequest) (*exporterv1.FinishResponse, error) {
	return g.c.Finish(ctx, r)
}

func dialExporterGRPC[O any](t testing.TB, def exporter.Definition[O]) (exporterClient, func()) {
	t.Helper()
	srv := exporter.NewServer(def, zerolog.Nop())
	conn := grpcConn(t, func(s *grpc.Server) { exporterv1.RegisterExporterServiceServer(s, srv) })
	return grpcExporterClient{exporterv1.NewExporterServiceClient(conn)}, func() {}
}

func optionValues(opts map[string]any) (map[string]*pluginv1.OptionValue, error) {
	out := map[string]*pluginv1.OptionValue{}
	for k, v := range opts {
		ov := option.Value(v)
		if ov == nil {
			return nil, fmt.Errorf("option %s: unsupported Go type %T", k, v)
		}
		out[k] = ov
	}
	return out, nil
}

// configureExporter runs Describe and Configure.
func configureExporter(ctx context.Context, c exporterClient, opts map[string]any, run exporter.RunMetadata) error {
	if _, err := c.Describe(ctx, &exporterv1.DescribeRequest{}); err != nil {
		return fmt.Errorf("describe: %w", err)
	}
	values, err := optionValues(opts)
	if err != nil {
		return err
	}
	cr, err := c.Configure(ctx, &exporterv1.ConfigureRequest{Options: values, Run: &exporterv1.RunMetadata{
		RunId: run.RunID, Workload: run.Workload, Model: run.Model, OutputDir: run.OutputDir,
		LmbenchVersion: run.LMBenchVersion, TagKeys: run.TagKeys, ConfigJson: run.ConfigJSON,
		StartedUnixNs: unixNs(run.Started),
	}})
	if err != nil {
		return fmt.Errorf("configure: %w", err)
	}
	if len(cr.GetErrors()) > 0 {
		return &ConfigError{Errors: cr.GetErrors()}
	}
	return nil
}

func driveExporter(ctx context.Context, c exporterClient, opts map[string]any, run exporter.RunMetadata, batches [][]exporter.Record, summary exporter.Summary) ([]exporter.File, error) {
	if err := configureExporter(ctx, c, opts, run); err != nil {
		return nil, err
	}
	for i, batch := range batches {
		req := &exporterv1.WriteRequest{Records: make([]*exporterv1.Record, len(batch))}
		for j, r := range batch {
			req.Records[j] = exporter.ToProto(r)
		}
		if _, err := c.Write(ctx, req); err != nil {
			return nil, fmt.Errorf("write batch %d: %w", i, err)
		}
	}
	return finishExporter(ctx, c, summary)
}

func finishExporter(ctx context.Context, c exporterClient, s exporter.Summary) ([]exporter.File, error) {
	resp, err := c.Finish(ctx, &exporterv1.FinishRequest{Summary: &exporterv1.Summary{
		RunId: s.RunID, SummaryJson: s.JSON, TotalRequests: s.Total, SuccessfulRequests: s.Successful,
		FailedRequests: s.Failed, ElapsedS: s.Elapsed, Interrupted: s.Interrupted,
	}})
	if err != nil {
		return nil, fmt.Errorf("finish: %w", err)
	}
	var files []exporter.File
	for _, f := range resp.GetFiles() {
		files = append(files, exporter.File{Path: f.GetPath(), Rows: f.GetRows(), Description: f.GetDescription()})
	}
	return files, nil
}

func unixNs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
