// Package record is the host's data model: a finished request (Record),
// the run it belongs to (Run) and how the run ended (Summary), and their
// lasting form, the journal: one JSON object per line, versioned and
// documented in docs/results-schema.md. The run loop's observer builds
// Records; the journal, the stats, the telemetry and the exporters all
// take them. A Record is the exporter protocol's own (protocol.Record),
// so what the journal keeps is what an exporter receives, field for field.
package record

import (
	"encoding/json"
	"time"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// Phase is the phase a request belongs to; the journal writes it as
// "warmup" or "measure".
type Phase = protocol.Phase

const (
	Warmup  = protocol.Warmup
	Measure = protocol.Measure
)

// Record is one finished request (see protocol.Record for its fields).
type Record = protocol.Record

// MaxChunkOffsets caps ChunkOffsetsUs per request: 16,384 chunks, 128 KiB
// of a record at most; a longer answer keeps its first chunks' times (and
// its Chunks count).
const MaxChunkOffsets = 16384

// Run describes a run: the journal's first line, and what exporters are
// configured with.
type Run struct {
	ID        string
	Workload  string
	Model     string
	OutputDir string
	Version   string   // lmbench's
	TagKeys   []string // the workload's declared tag keys, in order
	// ScoreKeys are the scores the workload gives its answers
	// (protocol.Scores), in order; none: it scores nothing.
	ScoreKeys []string
	// Config is the resolved configuration as a JSON object (no secrets).
	Config  json.RawMessage
	Started time.Time
	// RequestedRate is the measured requests per second the workload's
	// schedule asked for (0: none declared); a shard's is its part of the
	// run's (Shard.RequestedRate / Shard.Count).
	RequestedRate float64
	// Shard is this run's part of a sharded run (lmbench run --shard);
	// nil: not sharded.
	Shard *Shard
	// Merged are the shards a merged run was made of (lmbench merge), by
	// index; nil for a run that was not merged.
	Merged []Shard
	// Engine is the engine as lmbench found it (its profile: kind,
	// version, what it reports), as JSON (core/report's EngineProfile),
	// so a summary rebuilt from the journal has its engine block; nil:
	// not known (journals before it was recorded).
	Engine json.RawMessage
}

// Shard is one part of a sharded run: which one, the run it belongs to,
// and its clock, so lmbench merge can check the parts belong together
// and put their timestamps on one clock.
type Shard struct {
	Index, Count int
	// RunID is the sharded run's id, which every shard shares (and
	// Run.ID repeats); ConfigHash identifies the configuration, the
	// same in every shard of one run.
	RunID      string
	ConfigHash string
	// Seed is the shard's derived seed (protocol.Shard.Seed); the plan
	// itself comes from the run's seed, in the configuration.
	Seed int64
	// RequestedRate is the whole run's requested rate (0: none).
	RequestedRate float64
	// Host is the machine (hostname) the shard ran on.
	Host string
	// StartAt is the common start the shard waited for (zero: none), and
	// Lateness how far after it the shard started (negative: early).
	StartAt  time.Time
	Lateness time.Duration
	// Clock is how the shard's clock relates to the reference clock.
	Clock Clock
}

// Clock is a shard's clock against the run's reference clock: reference
// time = this host's time + Offset. Reference says what the reference
// was ("barrier http://…": the barrier's clock, measured; "local": the
// host's own clock, trusted as synchronised, Offset 0). RTT is the round
// trip of the sample Offset came from, and bounds its error (±RTT/2);
// Samples is how many were taken.
type Clock struct {
	Reference string
	Offset    time.Duration
	RTT       time.Duration
	Samples   int
}

// Status is how a run ended.
type Status string

const (
	// Completed: the workload finished its plan.
	Completed Status = "completed"
	// Interrupted: stopped by Ctrl-C or SIGTERM.
	Interrupted Status = "interrupted"
	// Aborted: lmbench stopped it (the engine unreachable or failing, a
	// failed warmup, the journal or the workload failing); the summary's
	// reason says why.
	Aborted Status = "aborted"
)

// Summary is how the measured phase ended.
type Summary struct {
	RunID string
	// JSON is bench_summary.json's content: {"config": …, "results": …, "run": …}.
	JSON       json.RawMessage
	Total      int64
	Successful int64
	Failed     int64
	Elapsed    float64 // seconds
	// Interrupted: the run was cut short (Status is not Completed).
	Interrupted bool
	// Status and Reason say how the run ended and, unless it completed,
	// why ("" in journals written before lmbench 0.2).
	Status Status
	Reason string
	// MeasureStart is when the measured phase started (zero: not known,
	// in journals written before lmbench 0.3); lmbench merge starts the
	// merged clock at the earliest shard's.
	MeasureStart time.Time
	// Files are the files the run wrote beside its journal, by name
	// inside its output directory (none in older journals): what
	// --overwrite removes with the journal.
	Files []string
}
