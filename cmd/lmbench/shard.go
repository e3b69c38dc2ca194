package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/barrier"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/host"
	"github.com/lmbench/lmbench/core/record"
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

// shardPlan is a sharded run's settings, checked before any network
// traffic.
type shardPlan struct {
	shard   protocol.Shard
	origin  string // where --shard came from, for errors
	runID   string
	startAt time.Time // zero with a barrier
	barrier string

	hash    string // the configuration's, once known
	through bool   // the measured phase's gate passed
	left    bool   // the barrier was told the shard stopped
}

// checkShard reads the shard options; nil when the run is not sharded.
func checkShard(v *config.Values) (*shardPlan, error) {
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
	p := &shardPlan{shard: sh, origin: v.Origin(keyShard), runID: v.String(keyRunID), barrier: v.String(keyBarrier)}
	start := v.String(keyStartAt)
	switch {
	case start != "" && p.barrier != "":
		return nil, fmt.Errorf("%s and %s: give one common start, not both", v.Origin(keyStartAt), v.Origin(keyBarrier))
	case start == "" && p.barrier == "":
		return nil, fmt.Errorf("%s %s: a sharded run needs a common start: --start-at TIME (on synchronised clocks) or --barrier URL (an lmbench barrier)", p.origin, raw)
	case start != "":
		if p.startAt, err = parseStartAt(start); err != nil {
			return nil, fmt.Errorf("%s: %w", v.Origin(keyStartAt), err)
		}
	default:
		u, err := url.Parse(p.barrier)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%s: %q: expected the barrier's http:// or https:// URL (e.g. http://lmbench-barrier:7070)", v.Origin(keyBarrier), p.barrier)
		}
	}
	if err := config.CheckShareable(v, sh.Count); err != nil {
		return nil, err
	}
	return p, nil
}

// parseStartAt reads RFC 3339 or Unix seconds (fractions allowed).
func parseStartAt(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 && !math.IsInf(f, 0) {
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(frac*1e9)), nil
	}
	return time.Time{}, fmt.Errorf("%q: expected an RFC 3339 time (2026-12-01T15:00:00Z) or Unix seconds (1796137200)", s)
}

// workloadShard is the run's shard for the workload (zero: unsharded).
func (p *shardPlan) workloadShard() protocol.Shard {
	if p == nil {
		return protocol.Shard{}
	}
	return p.shard
}

// start waits for the shard's common start (the barrier's answer, or
// --start-at) and returns the journal's shard block.
func (p *shardPlan) start(ctx context.Context, cfgJSON json.RawMessage, seed int64, rate float64, log zerolog.Logger) (*record.Shard, error) {
	hash := host.ConfigHash(cfgJSON)
	p.hash = hash
	hostname, _ := os.Hostname()
	sh := &record.Shard{Index: p.shard.Index, Count: p.shard.Count, ConfigHash: hash, Seed: p.shard.Seed(seed),
		RequestedRate: rate, Host: hostname, RunID: p.runID}
	var local time.Time // the start on this host's clock
	if p.barrier != "" {
		log.Info().Str("barrier", p.barrier).Msgf("shard %s: joining the barrier; the run starts when every shard has joined", p.shard)
		j, err := barrier.Join(ctx, &http.Client{}, p.barrier, barrier.JoinRequest{
			Index: p.shard.Index, Count: p.shard.Count, ConfigHash: hash, Host: hostname, RunID: p.runID})
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("shard %s: interrupted while waiting for the barrier's start", p.shard)
			}
			p.left = true // refused, or unreachable: nothing to tell it
			return nil, err
		}
		sh.RunID, sh.StartAt, sh.Clock, local = j.RunID, j.Start, j.Clock, j.LocalStart()
		log.Info().Msgf("shard %s: clock offset to the barrier %+.3f ms (±%.3f ms, best of %d round trips)",
			p.shard, float64(j.Clock.Offset)/1e6, float64(j.Clock.RTT)/2e6, j.Clock.Samples)
	} else {
		sh.StartAt, local = p.startAt, p.startAt
		sh.Clock = record.Clock{Reference: "local"}
		if sh.RunID == "" {
			sh.RunID = host.ShardRunID(p.startAt, hash)
		}
	}
	wait := time.Until(local)
	if wait > 0 {
		log.Info().Msgf("shard %s of run %s: starting at %s (in %s)", p.shard, sh.RunID,
			local.Local().Format("15:04:05.000"), wait.Round(time.Millisecond))
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, errors.New("interrupted while waiting for the shard's start; nothing was sent")
		}
	} else if wait < -time.Second {
		log.Warn().Msgf("shard %s started %s after the common start (%s): its requests go out late, and the merge says so",
			p.shard, (-wait).Round(time.Millisecond), sh.StartAt.UTC().Format(time.RFC3339Nano))
	}
	return sh, nil
}

// measureGate holds the measured phase until every shard reached it (a
// barrier's second gate), so the shards' schedules start together however
// long their warmups took; nil without a barrier (--start-at: each shard's
// measured phase starts when its warmup ends, and the merge reports the
// spread).
func (p *shardPlan) measureGate(sh *record.Shard, log zerolog.Logger) func(context.Context, protocol.Phase) error {
	if p == nil || p.barrier == "" {
		return nil
	}
	return func(ctx context.Context, ph protocol.Phase) error {
		if ph != protocol.Measure {
			return nil
		}
		j, err := barrier.JoinMeasure(ctx, &http.Client{}, p.barrier, barrier.JoinRequest{
			Index: sh.Index, Count: sh.Count, ConfigHash: sh.ConfigHash, Host: sh.Host, RunID: sh.RunID}, sh.Clock)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			p.left = true // the barrier refused: it knows
			return &host.GateError{Err: err}
		}
		p.through = true
		if wait := time.Until(j.LocalStart()); wait > 0 {
			log.Debug().Msgf("shard %s: the measured phase starts in %s, with every shard's", p.shard, wait.Round(time.Millisecond))
			t := time.NewTimer(wait)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
}

// leave tells the barrier this shard stopped before its measured phase
// (before it joined at all, even), so the others stop waiting for it;
// nothing without a barrier, or once the shard got through or left.
func (p *shardPlan) leave(reason string, log zerolog.Logger) {
	if p == nil || p.barrier == "" || p.through || p.left {
		return
	}
	p.left = true
	hostname, _ := os.Hostname()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := barrier.Leave(ctx, &http.Client{}, p.barrier, barrier.JoinRequest{
		Index: p.shard.Index, Count: p.shard.Count, Host: hostname, RunID: p.runID, ConfigHash: p.hash, Reason: reason}); err != nil {
		log.Warn().Msgf("could not tell the barrier this shard stopped: %v", err)
	}
}

// shareOf is this shard's part of a run-wide concurrency cap n (0: none).
func (p *shardPlan) shareOf(n int) int {
	if p == nil || n <= 0 {
		return n
	}
	return p.shard.Share(n)
}

// rateOf is this shard's part of the run's requested rate.
func (p *shardPlan) rateOf(rate float64) float64 {
	if p == nil {
		return rate
	}
	return rate / float64(p.shard.Count)
}
