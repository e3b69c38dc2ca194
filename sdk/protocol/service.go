package protocol

import (
	"context"
	"errors"
)

// WorkloadService is the workload protocol, in Go. The SDK's workload
// server answers it in the plugin process; the host and sdktest call it
// (through wire's gRPC client, or in-process).
type WorkloadService interface {
	Describe(ctx context.Context, host HostInfo) (WorkloadDescription, error)
	Configure(ctx context.Context, cfg WorkloadConfig) (Configured, error)
	Step(ctx context.Context, req StepRequest) (StepResponse, error)
	// OnFinished delivers results when they cannot travel in a Step: to a
	// plugin without FinishedInStep, past the size of one Step, and at the
	// end of a phase.
	OnFinished(ctx context.Context, results []Result) error
}

// Scorer is an optional method of a WorkloadService with the Scores
// capability: OnFinished that answers the scores of the results it
// delivered. The host calls it instead of OnFinished once both sides
// announced Scores.
type Scorer interface {
	OnFinishedScored(ctx context.Context, results []Result) ([]Score, error)
}

// ExporterService is the exporter protocol, in Go. The host calls
// Configure once, Write any number of times from one goroutine, then
// Finish once; Finish without any Write is valid.
type ExporterService interface {
	Describe(ctx context.Context, host HostInfo) (ExporterDescription, error)
	// Configure's answer carries Resolved and Errors only.
	Configure(ctx context.Context, cfg ExporterConfig) (Configured, error)
	Write(ctx context.Context, records []Record) error
	Finish(ctx context.Context, summary Summary) ([]File, error)
}

// ErrOutOfOrder is returned (wrapped) for a call the lifecycle does not
// allow at that point: Step before a successful Configure, Write after
// Finish. Over gRPC it is the FailedPrecondition code.
var ErrOutOfOrder = errors.New("called out of order")
