package bench

import (
	"context"
	"math"
	"time"

	"github.com/lmbench/lmbench/core/progress"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// startProgress feeds p.Progress (nil = none) a snapshot every
// p.ProgressEvery and returns a stop function, which stops the snapshots
// and closes the sink (the summary follows at once, so no last snapshot).
func startProgress(ctx context.Context, p Plan, o *observer) func() {
	if p.Progress == nil {
		return func() {}
	}
	every := p.ProgressEvery
	if every <= 0 {
		every = progress.DefaultEvery
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				p.Progress.Update(o.snapshot(now, p.Planned, ctx.Err() != nil))
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		p.Progress.Close()
	}
}

// snapshot reads the observer's counters and live stats at now.
func (o *observer) snapshot(now time.Time, planned int, interrupted bool) progress.Snapshot {
	o.mu.Lock()
	ph, start := o.phase, o.phaseStart
	o.mu.Unlock()
	sent, fin, failed := o.sent.Load(), o.done.Load(), o.failed.Load()
	s := progress.Snapshot{
		Phase: progress.PhaseName(ph), Done: int(fin), Failed: int(failed), InFlight: int(max(sent-fin, 0)),
		DispatchLagP50Ms: math.NaN(), DispatchLagP99Ms: math.NaN(),
	}
	if !start.IsZero() {
		s.Elapsed = max(now.Sub(start), 0)
	}
	if ph == protocol.Measure {
		s.Planned = planned
		c := o.live.Current(now)
		s.MeanTTFTMs, s.MeanDecodeSpeed = c.MeanTTFTMs, c.MeanDecodeSpeed
		s.InputThroughput, s.OutputThroughput = c.InputThroughput, c.OutputThroughput
		s.DispatchLagP50Ms, s.DispatchLagP99Ms = o.lags.Percentiles()
	}
	if interrupted {
		s.Phase = progress.PhaseDraining
	}
	return s
}
