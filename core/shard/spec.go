package shard

import (
	"fmt"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// FromSpec is the run's part of a sharded run from its settings (checked
// by config.Build), with its coordinator: FixedStart for --start-at, a
// Barrier client for --barrier. It contacts nothing; nil when the run is
// not sharded. An error names the option it comes from.
func FromSpec(o config.Shard) (*Part, error) {
	if !o.Sharded() {
		return nil, nil
	}
	sh, err := protocol.ParseShard(o.Part)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Origin, err)
	}
	if o.StartAt != "" {
		at, err := ParseStartAt(o.StartAt)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.StartAtOrigin, err)
		}
		return New(sh, o.RunID, FixedStart{At: at}), nil
	}
	b, err := NewBarrier(o.Barrier)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.BarrierOrigin, err)
	}
	return New(sh, o.RunID, b), nil
}
