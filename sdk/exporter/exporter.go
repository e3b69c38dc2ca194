// Package exporter is how an exporter plugin is written: declare options as
// a tagged struct (see package option), implement Write and Finish, and call
// Serve from main.
//
// Lifecycle (the host guarantees it): Configure once, then Write any number
// of times from one goroutine (never concurrently), then Finish once. Never
// Write after Finish; Finish without any Write is valid and must still
// produce well-formed (empty) files. Write should make data durable as it
// goes so a killed run keeps what was written; Finish flushes and closes.
//
// Test an exporter in-process with sdktest.RunExporter (the host's call
// sequence) and sdktest.CheckExporter (the lifecycle contract above).
package exporter

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// Phase of a record.
type Phase = protocol.Phase

const (
	Warmup  = protocol.Warmup
	Measure = protocol.Measure
)

// Record is one finished request. Durations are seconds; TTFT is -1 for a
// failed request (as in the original tool). Zero times mean "none".
type Record = protocol.Record

// RunMetadata describes the run being exported.
type RunMetadata = protocol.RunMetadata

// Summary is the final result of the measured phase.
type Summary = protocol.Summary

// File is a file an exporter wrote.
type File = protocol.File

// Logger is the plugin's logger (zerolog's).
type Logger = zerolog.Logger

// Exporter writes records somewhere.
type Exporter interface {
	Write(ctx context.Context, records []Record) error
	Finish(ctx context.Context, summary Summary) ([]File, error)
}

// Env is what New receives besides the decoded options.
type Env struct {
	Run    RunMetadata
	Logger Logger
	// Host is what the host announced (empty for a host older than
	// protocol minor 1).
	Host protocol.HostInfo
}

// Definition describes an exporter plugin.
type Definition[O any] struct {
	Name     string // canonical name, e.g. "csv"
	Prefix   string // flag prefix, e.g. "csv" -> --csv-file
	Summary  string
	Version  string
	Defaults O
	New      func(opts O, env Env) (Exporter, error)
}
