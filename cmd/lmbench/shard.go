package main

import (
	"fmt"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/shard"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// checkShard builds the run's part of a sharded run from its Spec (its
// options checked by config.Build), before any network traffic; nil when
// the run is not sharded.
func checkShard(spec *config.Spec) (*shard.Part, error) {
	o := spec.Shard
	if !o.Sharded() {
		return nil, nil
	}
	sh, err := protocol.ParseShard(o.Part)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Origin, err)
	}
	var c shard.Coordinator
	if o.StartAt != "" {
		at, err := shard.ParseStartAt(o.StartAt)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.StartAtOrigin, err)
		}
		c = shard.FixedStart{At: at}
	} else {
		b, err := shard.NewBarrier(o.Barrier)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.BarrierOrigin, err)
		}
		c = b
	}
	return shard.New(sh, o.RunID, c), nil
}
