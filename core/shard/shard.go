package shard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Coordinator brings the shards of one run together.
type Coordinator interface {
	// Start waits for the run's common start, given the shard's block
	// (index, count, configuration hash, host, the run id given if any):
	// it sets the block's RunID, StartAt and Clock, and returns the start
	// on this host's clock (which Part.Start then waits for).
	Start(ctx context.Context, sh *record.Shard, log zerolog.Logger) (time.Time, error)
	// Gate holds phase until every shard has reached it; an error (a
	// *GateError when the others could not be met) stops the run before
	// the phase. A coordinator without a gate returns nil at once.
	Gate(ctx context.Context, sh *record.Shard, phase protocol.Phase, log zerolog.Logger) error
	// Leave tells the other shards this one stopped before its measured
	// phase, for the reason given; sh is the block as far as it was known.
	Leave(sh record.Shard, reason string, log zerolog.Logger)
}

// GateError is a phase gate failing: the shards of a sharded run could
// not start a phase together. The run that gets it is aborted.
type GateError struct{ Err error }

func (e *GateError) Error() string { return e.Err.Error() }
func (e *GateError) Unwrap() error { return e.Err }

// Part is this process's shard of a sharded run. A nil *Part is an
// unsharded run: its methods then change nothing.
type Part struct {
	Shard protocol.Shard
	// RunID is the run id given (--run-id); "" leaves it to the
	// coordinator.
	RunID       string
	Coordinator Coordinator

	hash string // the configuration's, once Start computed it
}

// New is shard sh of a run whose shards meet through c.
func New(sh protocol.Shard, runID string, c Coordinator) *Part {
	return &Part{Shard: sh, RunID: runID, Coordinator: c}
}

// WorkloadShard is the run's shard for the workload (zero: unsharded).
func (p *Part) WorkloadShard() protocol.Shard {
	if p == nil {
		return protocol.Shard{}
	}
	return p.Shard
}

// Start waits for the shard's common start and returns the journal's
// shard block. cfg is the run's recorded configuration (its hash tells
// the shards of one run apart from others), seed the run's seed (the
// shard's own is derived from it), rate the run's requested rate.
func (p *Part) Start(ctx context.Context, cfg json.RawMessage, seed int64, rate float64, log zerolog.Logger) (*record.Shard, error) {
	p.hash = ConfigHash(cfg)
	hostname, _ := os.Hostname()
	sh := &record.Shard{Index: p.Shard.Index, Count: p.Shard.Count, ConfigHash: p.hash, Seed: p.Shard.Seed(seed),
		RequestedRate: rate, Host: hostname, RunID: p.RunID}
	local, err := p.Coordinator.Start(ctx, sh, log)
	if err != nil {
		return nil, err
	}
	wait := time.Until(local)
	if wait > 0 {
		log.Info().Msgf("shard %s of run %s: starting at %s (in %s)", p.Shard, sh.RunID,
			local.Local().Format("15:04:05.000"), wait.Round(time.Millisecond))
		if !sleep(ctx, wait) {
			return nil, errors.New("interrupted while waiting for the shard's start; nothing was sent")
		}
	} else if wait < -time.Second {
		log.Warn().Msgf("shard %s started %s after the common start (%s): its requests go out late, and the merge says so",
			p.Shard, (-wait).Round(time.Millisecond), sh.StartAt.UTC().Format(time.RFC3339Nano))
	}
	return sh, nil
}

// BeforePhase is the run's phase gate for the shard whose block Start
// returned (nil for an unsharded run).
func (p *Part) BeforePhase(sh *record.Shard, log zerolog.Logger) func(context.Context, protocol.Phase) error {
	if p == nil {
		return nil
	}
	return func(ctx context.Context, ph protocol.Phase) error {
		return p.Coordinator.Gate(ctx, sh, ph, log)
	}
}

// Leave tells the other shards this one stopped before its measured phase
// (before it started, even), so they stop waiting for it.
func (p *Part) Leave(reason string, log zerolog.Logger) {
	if p == nil {
		return
	}
	hostname, _ := os.Hostname()
	p.Coordinator.Leave(record.Shard{Index: p.Shard.Index, Count: p.Shard.Count, Host: hostname, RunID: p.RunID,
		ConfigHash: p.hash}, reason, log)
}

// ConfigHash identifies a run's configuration (its resolved configuration
// as the journal records it): "sha256:" and the hash of its canonical
// JSON (keys sorted), so the shards of one run, whose configurations are
// the same whatever order their files wrote the keys in, share it.
func ConfigHash(cfg json.RawMessage) string {
	var v any
	b := []byte(cfg)
	if json.Unmarshal(cfg, &v) == nil {
		if c, err := json.Marshal(v); err == nil {
			b = c
		}
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// DefaultRunID is the id the shards of a run started at start share when
// none is given: the start time and the configuration's hash, so every
// shard derives the same.
func DefaultRunID(start time.Time, configHash string) string {
	return start.UTC().Format("20060102T150405Z") + "-" + strings.TrimPrefix(configHash, "sha256:")[:8]
}

// sleep waits d, or until ctx is done (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
