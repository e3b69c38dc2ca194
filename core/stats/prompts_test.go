package stats

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/record"
)

func TestPromptCheck(t *testing.T) {
	t.Parallel()
	start := time.Unix(100, 0)
	b := NewBuilder(start, 0, Options{})
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	for _, r := range []record.Record{
		{Phase: record.Warmup, Success: true, InputTokens: 2005, StatedPromptTokens: 2005},
		{Phase: record.Warmup, Success: true, InputTokens: 2005, StatedPromptTokens: 2005},
		{Phase: record.Measure, Success: true, InputTokens: 2030, StatedPromptTokens: 2025},
		{Phase: record.Measure, Success: true, InputTokens: 2025, StatedPromptTokens: 2025},
		{Phase: record.Measure, Success: false, InputTokens: 0, StatedPromptTokens: 2025}, // failed: not compared
		{Phase: record.Measure, Success: true, InputTokens: 1990},                         // nothing stated
	} {
		r.TTFT, r.Latency, r.Submit, r.Finish = 0.1, 0.2, at(0), at(1)
		b.Add(&r)
	}
	f := b.Final([]float64{50, 90, 99})
	want := struct{ Warmup, Measure PromptCheck }{
		Warmup:  PromptCheck{Requests: 2, Stated: 4010, Measured: 4010},
		Measure: PromptCheck{Requests: 2, Stated: 4050, Measured: 4055, Differing: 1},
	}
	if d := cmp.Diff(want, f.Prompts); d != "" {
		t.Errorf("prompts (-want +got):\n%s", d)
	}
	if got := f.Prompts.Measure.MeanDifference(); got != 2.5 {
		t.Errorf("mean difference %v, want 2.5", got)
	}
	if got := (PromptCheck{}).MeanDifference(); !math.IsNaN(got) {
		t.Errorf("mean difference of nothing = %v, want NaN (undefined)", got)
	}
}
