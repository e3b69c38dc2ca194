package bench

import (
	"math"
	"testing"

	"github.com/lmbench/lmbench/core/enginemetrics"
)

// A phase shorter than --metrics-interval has only its boundary scrapes,
// which miss the peak: its peaks are n/a (NaN), not the boundaries' 0.
func TestPeaksNeedASampleInsideThePhase(t *testing.T) {
	t.Parallel()
	boundaries := enginemetrics.PhaseStats{Gauges: map[string]enginemetrics.GaugeStats{
		enginemetrics.VLLMRunning: {N: 2}, enginemetrics.VLLMWaiting: {N: 2}, enginemetrics.VLLMKVUsage: {N: 2},
	}}
	got := enginePhase(boundaries, "vllm")
	for name, v := range map[string]float64{"running": got.RunningMax, "waiting": got.WaitingMax, "KV usage": got.KVUsageMax} {
		if !math.IsNaN(v) {
			t.Errorf("peak %s = %v from boundary scrapes alone, want n/a", name, v)
		}
	}
	sampled := enginemetrics.PhaseStats{Gauges: map[string]enginemetrics.GaugeStats{
		enginemetrics.VLLMWaiting: {N: 3, Max: 10, Inside: 1},
	}}
	if got := enginePhase(sampled, "vllm").WaitingMax; got != 10 {
		t.Errorf("peak waiting = %v with a sample inside the phase, want 10", got)
	}
}
