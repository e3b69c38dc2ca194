package shard

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/barrier"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Barrier meets the other shards at an lmbench barrier (--barrier): the
// shard measures its clock against the barrier's and joins; the barrier
// answers every shard one start once all joined, and again at the
// measured phase, so the shards' schedules start together however long
// their warmups took.
type Barrier struct {
	URL    string
	Client *http.Client

	through bool // the measured phase's gate passed
	left    bool // the barrier knows the shard stopped (it refused it, or was told)
}

// NewBarrier is the barrier at rawURL, an http:// or https:// URL.
func NewBarrier(rawURL string) (*Barrier, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q: expected the barrier's http:// or https:// URL (e.g. http://lmbench-barrier:7070)", rawURL)
	}
	return &Barrier{URL: rawURL, Client: &http.Client{}}, nil
}

// Start joins the barrier and returns the start it answered, on this
// host's clock (the barrier's, moved by the measured offset).
func (b *Barrier) Start(ctx context.Context, sh *record.Shard, log zerolog.Logger) (time.Time, error) {
	id := protocol.Shard{Index: sh.Index, Count: sh.Count}
	log.Info().Str("barrier", b.URL).Msgf("shard %s: joining the barrier; the run starts when every shard has joined", id)
	j, err := barrier.Join(ctx, b.Client, b.URL, barrier.JoinRequest{
		Index: sh.Index, Count: sh.Count, ConfigHash: sh.ConfigHash, Host: sh.Host, RunID: sh.RunID})
	if err != nil {
		if ctx.Err() != nil {
			return time.Time{}, fmt.Errorf("shard %s: interrupted while waiting for the barrier's start", id)
		}
		b.left = true // refused, or unreachable: nothing to tell it
		return time.Time{}, err
	}
	sh.RunID, sh.StartAt, sh.Clock = j.RunID, j.Start, j.Clock
	log.Info().Msgf("shard %s: clock offset to the barrier %+.3f ms (±%.3f ms, best of %d round trips)",
		id, float64(j.Clock.Offset)/1e6, float64(j.Clock.RTT)/2e6, j.Clock.Samples)
	return j.LocalStart(), nil
}

// Gate holds the measured phase until every shard reached it (the
// barrier's second gate); other phases pass.
func (b *Barrier) Gate(ctx context.Context, sh *record.Shard, ph protocol.Phase, log zerolog.Logger) error {
	if ph != protocol.Measure {
		return nil
	}
	j, err := barrier.JoinMeasure(ctx, b.Client, b.URL, barrier.JoinRequest{
		Index: sh.Index, Count: sh.Count, ConfigHash: sh.ConfigHash, Host: sh.Host, RunID: sh.RunID}, sh.Clock)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		b.left = true // the barrier refused: it knows
		return &GateError{Err: err}
	}
	b.through = true
	if wait := time.Until(j.LocalStart()); wait > 0 {
		log.Debug().Msgf("shard %s: the measured phase starts in %s, with every shard's", protocol.Shard{Index: sh.Index, Count: sh.Count}, wait.Round(time.Millisecond))
		if !sleep(ctx, wait) {
			return ctx.Err()
		}
	}
	return nil
}

// Leave tells the barrier the shard stopped, so the others stop waiting
// for it; nothing once the shard got through its measured gate, or the
// barrier knows already.
func (b *Barrier) Leave(sh record.Shard, reason string, log zerolog.Logger) {
	if b.through || b.left {
		return
	}
	b.left = true
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := barrier.Leave(ctx, b.Client, b.URL, barrier.JoinRequest{
		Index: sh.Index, Count: sh.Count, Host: sh.Host, RunID: sh.RunID, ConfigHash: sh.ConfigHash, Reason: reason}); err != nil {
		log.Warn().Msgf("could not tell the barrier this shard stopped: %v", err)
	}
}
