package main

import (
	"fmt"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/shard"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Config keys of a sharded run. None is part of the run's recorded
// configuration: every shard records the same one (and the same hash);
// the journal's header has the shard's own block.
const (
	keyShard   = "shard"
	keyRunID   = "run_id"
	keyStartAt = "start_at"
	keyBarrier = "barrier"
)

// shardOptions are the options of a sharded run (docs/distributed.md).
func shardOptions() []config.Option {
	return []config.Option{
		{Key: keyShard, Type: tString, Default: "", Label: "Shard", Group: generalGroup, Advanced: true,
			Help: "Run one shard of a run split over several processes or machines: I/N, the shard's index from 0 and the number of shards (e.g. 0/3). The workload sends its part of the plan (sessions, documents or request ordinals k with k mod N = I; open-loop schedules keep the global due times); lmbench merge rebuilds the whole run from the shards' output directories. Needs --start-at or --barrier."},
		{Key: keyRunID, Type: tString, Default: "", Label: "Run id", Group: generalGroup, Advanced: true,
			Help: "The run id every shard of a sharded run records (default: the barrier's, or the --start-at time and the configuration's hash)."},
		{Key: keyStartAt, Type: tString, Default: "", Label: "Start at", Group: generalGroup, Advanced: true,
			Help: "The common start of a sharded run on each host's own clock (keep them synchronised: chrony/NTP): RFC 3339 (2026-12-01T15:00:00Z) or Unix seconds. Each shard waits for it after contacting the engine."},
		{Key: keyBarrier, Type: tString, Default: "", Label: "Barrier URL", Group: generalGroup, Advanced: true,
			Help: "URL of an lmbench barrier (lmbench barrier --shards N): each shard measures its clock against the barrier's, joins, and starts when every shard has joined; after its warmup it waits there again, so the measured phases (and open-loop schedules) start together; a shard stopping early tells the others. lmbench merge puts the shards' timestamps on the barrier's clock."},
	}
}

// checkShard reads the shard options, before any network traffic; nil
// when the run is not sharded.
func checkShard(v *config.Values) (*shard.Part, error) {
	raw := v.String(keyShard)
	if raw == "" {
		for _, k := range []string{keyRunID, keyStartAt, keyBarrier} {
			if v.String(k) != "" {
				return nil, fmt.Errorf("%s: only for a sharded run: add --shard I/N", v.Origin(k))
			}
		}
		return nil, nil
	}
	sh, err := protocol.ParseShard(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.Origin(keyShard), err)
	}
	var c shard.Coordinator
	start, url := v.String(keyStartAt), v.String(keyBarrier)
	switch {
	case start != "" && url != "":
		return nil, fmt.Errorf("%s and %s: give one common start, not both", v.Origin(keyStartAt), v.Origin(keyBarrier))
	case start == "" && url == "":
		return nil, fmt.Errorf("%s %s: a sharded run needs a common start: --start-at TIME (on synchronised clocks) or --barrier URL (an lmbench barrier)", v.Origin(keyShard), raw)
	case start != "":
		at, err := shard.ParseStartAt(start)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.Origin(keyStartAt), err)
		}
		c = shard.FixedStart{At: at}
	default:
		b, err := shard.NewBarrier(url)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.Origin(keyBarrier), err)
		}
		c = b
	}
	if err := config.CheckShareable(v, sh.Count); err != nil {
		return nil, err
	}
	return shard.New(sh, v.String(keyRunID), c), nil
}
