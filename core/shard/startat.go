package shard

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// FixedStart is a common start agreed beforehand (--start-at), on each
// host's own clock (keep them synchronised): no gate, so each shard's
// measured phase starts when its warmup ends, and the merge reports the
// spread.
type FixedStart struct {
	At time.Time
}

// Start is At; the run id, when none was given, is derived from At and
// the configuration's hash, so every shard derives the same.
func (f FixedStart) Start(_ context.Context, sh *record.Shard, _ zerolog.Logger) (time.Time, error) {
	sh.StartAt = f.At
	sh.Clock = record.Clock{Reference: "local"}
	if sh.RunID == "" {
		sh.RunID = DefaultRunID(f.At, sh.ConfigHash)
	}
	return f.At, nil
}

// Gate passes every phase at once.
func (FixedStart) Gate(context.Context, *record.Shard, protocol.Phase, zerolog.Logger) error {
	return nil
}

// Leave has no one to tell.
func (FixedStart) Leave(record.Shard, string, zerolog.Logger) {}

// ParseStartAt reads a start time: RFC 3339 or Unix seconds (fractions
// allowed).
func ParseStartAt(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 && !math.IsInf(f, 0) {
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(frac*1e9)), nil
	}
	return time.Time{}, fmt.Errorf("%q: expected an RFC 3339 time (2026-12-01T15:00:00Z) or Unix seconds (1796137200)", s)
}
