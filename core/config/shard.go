package config

import (
	"fmt"

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
func shardOptions() []Option {
	return []Option{
		{Key: keyShard, Type: protocol.OptionString, Default: "", Label: "Shard", Group: GeneralGroup, Advanced: true,
			Help: "Run one shard of a run split over several processes or machines: I/N, the shard's index from 0 and the number of shards (e.g. 0/3). The workload sends its part of the plan (sessions, documents or request ordinals k with k mod N = I; open-loop schedules keep the global due times); lmbench merge rebuilds the whole run from the shards' output directories. Needs --start-at or --barrier."},
		{Key: keyRunID, Type: protocol.OptionString, Default: "", Label: "Run id", Group: GeneralGroup, Advanced: true,
			Help: "The run id every shard of a sharded run records (default: the barrier's, or the --start-at time and the configuration's hash)."},
		{Key: keyStartAt, Type: protocol.OptionString, Default: "", Label: "Start at", Group: GeneralGroup, Advanced: true,
			Help: "The common start of a sharded run on each host's own clock (keep them synchronised: chrony/NTP): RFC 3339 (2026-12-01T15:00:00Z) or Unix seconds. Each shard waits for it after contacting the engine."},
		{Key: keyBarrier, Type: protocol.OptionString, Default: "", Label: "Barrier URL", Group: GeneralGroup, Advanced: true,
			Help: "URL of an lmbench barrier (lmbench barrier --shards N): each shard measures its clock against the barrier's, joins, and starts when every shard has joined; after its warmup it waits there again, so the measured phases (and open-loop schedules) start together; a shard stopping early tells the others. lmbench merge puts the shards' timestamps on the barrier's clock."},
	}
}

// keyUploadTo is --upload-to: where a run's files go once written.
const keyUploadTo = "upload_to"

// uploadOptions are --upload-to.
func uploadOptions() []Option {
	return []Option{
		{Key: keyUploadTo, Type: protocol.OptionString, Default: "", Label: "Upload to", Group: GeneralGroup, Advanced: true,
			Help: "Also put the output directory's files in S3-compatible object storage once the run has written them (whatever way it ended): s3://bucket/prefix (e.g. s3://bench/run-7/shard-0; lmbench merge reads s3:// URLs back). The endpoint is AWS_ENDPOINT_URL (default AWS S3), the credentials AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, the shared credentials file or the instance's role."},
	}
}

// Shard is a sharded run's settings as given (core/shard parses the start
// and the barrier's URL): Part is "" for a run that is not sharded.
type Shard struct {
	Part, Origin           string // --shard I/N
	RunID                  string
	StartAt, StartAtOrigin string
	Barrier, BarrierOrigin string
}

// Sharded says the run is one shard of several.
func (s Shard) Sharded() bool { return s.Part != "" }

// Upload is --upload-to as given ("" for none).
type Upload struct{ To, Origin string }

// shards reads the sharded run's options: the start options only with
// --shard, and then one common start; a concurrency cap must divide.
func (s *Spec) shards(v *Values) error {
	s.Upload = Upload{To: v.String(keyUploadTo), Origin: v.Origin(keyUploadTo)}
	s.Shard = ReadShard(v)
	if !s.Shard.Sharded() {
		for _, k := range []string{keyRunID, keyStartAt, keyBarrier} {
			if v.String(k) != "" {
				return fmt.Errorf("%s: only for a sharded run: add --shard I/N", v.Origin(k))
			}
		}
		return nil
	}
	sh, err := protocol.ParseShard(s.Shard.Part)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Shard.Origin, err)
	}
	switch {
	case s.Shard.StartAt != "" && s.Shard.Barrier != "":
		return fmt.Errorf("%s and %s: give one common start, not both", s.Shard.StartAtOrigin, s.Shard.BarrierOrigin)
	case s.Shard.StartAt == "" && s.Shard.Barrier == "":
		return fmt.Errorf("%s %s: a sharded run needs a common start: --start-at TIME (on synchronised clocks) or --barrier URL (an lmbench barrier)", s.Shard.Origin, s.Shard.Part)
	}
	return CheckShareable(v, sh.Count)
}

// ReadShard reads the shard options alone (a sweep's, which refuses them).
func ReadShard(v *Values) Shard {
	return Shard{Part: v.String(keyShard), Origin: v.Origin(keyShard), RunID: v.String(keyRunID),
		StartAt: v.String(keyStartAt), StartAtOrigin: v.Origin(keyStartAt),
		Barrier: v.String(keyBarrier), BarrierOrigin: v.Origin(keyBarrier)}
}
