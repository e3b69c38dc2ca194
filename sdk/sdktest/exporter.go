package sdktest

import (
	"context"
	"fmt"
	"testing"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"

	"github.com/lmbench/lmbench/sdk/exporter"
	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/wire"
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

// dialExporterGRPC serves def over gRPC and returns a client of it.
func dialExporterGRPC[O any](t testing.TB, def exporter.Definition[O]) protocol.ExporterService {
	t.Helper()
	srv := exporter.NewServer(def, zerolog.Nop())
	return wire.ExporterClient(grpcConn(t, func(s *grpc.Server) { wire.RegisterExporter(s, srv) }))
}

// sdktestHost is the host sdktest plays: the newest protocol, every capability.
var sdktestHost = protocol.HostInfo{Version: "sdktest", ProtocolMinor: protocol.Minor, Capabilities: protocol.HostCapabilities}

// configureExporter runs Describe and Configure.
func configureExporter(ctx context.Context, c protocol.ExporterService, opts map[string]any, run exporter.RunMetadata) error {
	if _, err := c.Describe(ctx, sdktestHost); err != nil {
		return fmt.Errorf("describe: %w", err)
	}
	values, err := option.Values(opts)
	if err != nil {
		return err
	}
	cr, err := c.Configure(ctx, protocol.ExporterConfig{Options: values, Run: run})
	if err != nil {
		return fmt.Errorf("configure: %w", err)
	}
	if len(cr.Errors) > 0 {
		return &ConfigError{Errors: cr.Errors}
	}
	return nil
}

func driveExporter(ctx context.Context, c protocol.ExporterService, opts map[string]any, run exporter.RunMetadata, batches [][]exporter.Record, summary exporter.Summary) ([]exporter.File, error) {
	if err := configureExporter(ctx, c, opts, run); err != nil {
		return nil, err
	}
	for i, batch := range batches {
		if err := c.Write(ctx, batch); err != nil {
			return nil, fmt.Errorf("write batch %d: %w", i, err)
		}
	}
	return finishExporter(ctx, c, summary)
}

func finishExporter(ctx context.Context, c protocol.ExporterService, s exporter.Summary) ([]exporter.File, error) {
	files, err := c.Finish(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("finish: %w", err)
	}
	return files, nil
}
