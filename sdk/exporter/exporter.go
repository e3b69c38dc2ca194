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
	"time"

	"github.com/rs/zerolog"
)

// Phase of a record.
type Phase int

const (
	Warmup  Phase = 1
	Measure Phase = 2
)

func (p Phase) String() string {
	switch p {
	case Warmup:
		return "warmup"
	case Measure:
		return "measure"
	}
	return "unspecified"
}

// Record is one finished request. Durations are seconds; TTFT is -1 for a
// failed request (as in the original tool). Zero times mean "none".
type Record struct {
	RunID        string
	Workload     string
	Phase        Phase
	RequestID    string
	Tags         map[string]string
	Success      bool
	Error        string
	TTFT         float64
	Latency      float64
	DecodeSpeed  float64
	ITL          float64
	InputTokens  int64
	OutputTokens int64
	CachedTokens int64
	Scheduled    time.Time
	Submit       time.Time
	FirstToken   time.Time
	Finish       time.Time
	Seq          int64
}

// RunMetadata describes the run being exported.
type RunMetadata struct {
	RunID          string
	Workload       string
	Model          string
	OutputDir      string
	LMBenchVersion string
	TagKeys        []string
	ConfigJSON     string
	Started        time.Time
}

// Summary is the final result of the measured phase.
type Summary struct {
	RunID       string
	JSON        string // bench_summary.json's content
	Total       int64
	Successful  int64
	Failed      int64
	Elapsed     float64
	Interrupted bool
}

// File is a file an exporter wrote.
type File struct {
	Path        string
	Rows        int64
	Description string
}

// Exporter writes records somewhere.
type Exporter interface {
	Write(ctx context.Context, records []Record) error
	Finish(ctx context.Context, summary Summary) ([]File, error)
}

// Env is what New receives besides the decoded options.
type Env struct {
	Run    RunMetadata
	Logger zerolog.Logger
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
