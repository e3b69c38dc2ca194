package plugin

import (
	"bytes"

	"github.com/lmbench/lmbench/sdk/wire"

	"context"

	"github.com/lmbench/lmbench/core/export"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Host is what this lmbench announces to every plugin it describes.
func Host(version string) protocol.HostInfo {
	return protocol.HostInfo{Version: version, ProtocolMinor: protocol.Minor, Capabilities: protocol.HostCapabilities}
}

// WorkloadService is c's workload service with every error naming the
// plugin (and quoting its last stderr lines if it died).
func (c *Client) WorkloadService() protocol.WorkloadService { return namedWorkload{c} }

type namedWorkload struct{ c *Client }

func (w namedWorkload) Describe(ctx context.Context, h protocol.HostInfo) (protocol.WorkloadDescription, error) {
	d, err := w.c.Workload().Describe(ctx, h)
	return d, w.c.Wrap("Describe", err)
}

func (w namedWorkload) Configure(ctx context.Context, cfg protocol.WorkloadConfig) (protocol.Configured, error) {
	r, err := w.c.Workload().Configure(ctx, cfg)
	return r, w.c.Wrap("Configure", err)
}

func (w namedWorkload) Step(ctx context.Context, req protocol.StepRequest) (protocol.StepResponse, error) {
	r, err := w.c.Workload().Step(ctx, req)
	return r, w.c.Wrap("Step", err)
}

func (w namedWorkload) OnFinished(ctx context.Context, rs []protocol.Result) error {
	return w.c.Wrap("OnFinished", w.c.Workload().OnFinished(ctx, rs))
}

// OnFinishedScored is OnFinished answering the plugin's scores
// (protocol.Scorer); a service without them answers none.
func (w namedWorkload) OnFinishedScored(ctx context.Context, rs []protocol.Result) ([]protocol.Score, error) {
	sc, ok := w.c.Workload().(protocol.Scorer)
	if !ok {
		return nil, w.OnFinished(ctx, rs)
	}
	scores, err := sc.OnFinishedScored(ctx, rs)
	return scores, w.c.Wrap("OnFinished", err)
}

// Exporter is an exporter plugin as the host uses it: configured with the
// host's run, fed the host's records (export.Exporter).
type Exporter struct{ c *Client }

// NewExporter returns the exporter of c.
func NewExporter(c *Client) *Exporter { return &Exporter{c: c} }

// Name is the exporter's canonical name.
func (e *Exporter) Name() string { return e.c.Name }

// Configure configures the exporter for run.
func (e *Exporter) Configure(ctx context.Context, opts protocol.Values, run record.Run) (protocol.Configured, error) {
	r, err := e.c.Exporter().Configure(ctx, protocol.ExporterConfig{Options: opts, Run: RunMetadata(run)})
	return r, e.c.Wrap("Configure", err)
}

// Write sends records: the host's records are the protocol's, so they go
// as they are.
func (e *Exporter) Write(ctx context.Context, recs []*record.Record) error {
	out := make([]protocol.Record, len(recs))
	for i, r := range recs {
		out[i] = *r
	}
	return e.c.Wrap("Write", e.c.Exporter().Write(ctx, out))
}

// Finish ends the export.
func (e *Exporter) Finish(ctx context.Context, s record.Summary) ([]export.File, error) {
	files, err := e.c.Exporter().Finish(ctx, SummaryOf(s))
	if err != nil {
		return nil, e.c.Wrap("Finish", err)
	}
	out := make([]export.File, len(files))
	for i, f := range files {
		out[i] = export.File{Path: f.Path, Rows: f.Rows, Description: f.Description}
	}
	return out, nil
}

// Wrap is the client's Wrap, for the fan-out's messages.
func (e *Exporter) Wrap(op string, err error) error { return e.c.Wrap(op, err) }

// The host's run and summary as the exporter protocol carries them.

// RunMetadata converts a run.
func RunMetadata(r record.Run) protocol.RunMetadata {
	return protocol.RunMetadata{RunID: r.ID, Workload: r.Workload, Model: r.Model, OutputDir: r.OutputDir,
		LMBenchVersion: r.Version, TagKeys: r.TagKeys, ConfigJSON: string(r.Config), Started: r.Started}
}

// SummaryOf converts a summary.
func SummaryOf(s record.Summary) protocol.Summary {
	return protocol.Summary{RunID: s.RunID, JSON: string(s.JSON), Total: s.Total, Successful: s.Successful,
		Failed: s.Failed, Elapsed: s.Elapsed, Interrupted: s.Interrupted}
}

// ParseDescribe reads what a plugin binary prints for `describe` (both
// kinds; the workload fields are zero for an exporter).
func ParseDescribe(out []byte) (protocol.WorkloadDescription, error) {
	return wire.ParseDescribeJSON(bytes.TrimSpace(out))
}
