package tokenize

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// Sizing is what counting prompt tokens cost a run, a phase of its own
// before the first request: the time spent answering the workload's
// queries and the calls made to the engine's /tokenize for them (0 with a
// tokenizer file).
type Sizing struct {
	Seconds     float64
	EngineCalls int64
}

// Meter wraps a counter, timing every query; its Sizing adds the engine
// calls when the counter is the engine's.
type Meter struct {
	c    protocol.TokenCounter
	busy atomic.Int64 // nanoseconds inside CountTokens
}

// NewMeter meters c (nil: no tokenizer, nothing to meter, a nil Meter).
func NewMeter(c protocol.TokenCounter) *Meter {
	if c == nil {
		return nil
	}
	return &Meter{c: c}
}

// CountTokens answers q from the metered counter.
func (m *Meter) CountTokens(ctx context.Context, q protocol.TokenQuery) (protocol.TokenCounts, error) {
	start := time.Now()
	defer func() { m.busy.Add(int64(time.Since(start))) }()
	return m.c.CountTokens(ctx, q)
}

// Sizing is the cost so far; a nil Meter's is zero.
func (m *Meter) Sizing() Sizing {
	if m == nil {
		return Sizing{}
	}
	s := Sizing{Seconds: time.Duration(m.busy.Load()).Seconds()}
	if e, ok := m.c.(*engineTokenizer); ok {
		s.EngineCalls = e.calls.Load()
	}
	return s
}
