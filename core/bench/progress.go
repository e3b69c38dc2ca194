package bench

import (
	"fmt"
	"time"

	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
)

// startProgress prints a plain progress line every p.ProgressEvery to
// p.Progress (nil = none) and returns a stop function.
func startProgress(p Plan, o *observer) func() {
	if p.Progress == nil {
		return func() {}
	}
	every := p.ProgressEvery
	if every == 0 {
		every = 2 * time.Second
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
				o.mu.Lock()
				ph := o.phase
				o.mu.Unlock()
				sent, fin, failed := o.sent.Load(), o.done.Load(), o.failed.Load()
				total := "?"
				if ph == workloadv1.Phase_PHASE_MEASURE && p.Planned > 0 {
					total = fmt.Sprint(p.Planned)
				}
				line := fmt.Sprintf("[%s] done %d/%s  failed %d  in-flight %d", phaseName(ph), fin, total, failed, sent-fin)
				if ph == workloadv1.Phase_PHASE_MEASURE {
					c := o.stats.Current(now)
					line += fmt.Sprintf("  elapsed %.1fs  mean TTFT %.1f ms  decode %.1f tok/s  in %.0f tok/s  out %.0f tok/s",
						c.ElapsedTime, c.MeanTTFTMs, c.MeanDecodeSpeed, c.InputThroughput, c.OutputThroughput)
				}
				fmt.Fprintln(p.Progress, line)
			}
		}
	}()
	return func() { close(stop); <-done }
}

func phaseName(p workloadv1.Phase) string {
	switch p {
	case workloadv1.Phase_PHASE_WARMUP:
		return "warmup"
	case workloadv1.Phase_PHASE_MEASURE:
		return "measure"
	}
	return "starting"
}
