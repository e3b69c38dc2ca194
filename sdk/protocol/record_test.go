package protocol

import (
	"math"
	"testing"
	"time"
)

func TestRecordDerivedTimings(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ok := Record{Success: true, TTFT: 0.25, Latency: 1.25, OutputTokens: 11,
		Scheduled: at(0), Submit: at(40), FirstToken: at(290), Finish: at(1290)}
	type timing struct {
		v  float64
		ok bool
	}
	tests := []struct {
		name            string
		r               Record
		tpot, ttft, e2e timing
	}{
		{"success", ok, timing{0.1, true}, timing{0.29, true}, timing{1.29, true}},
		{"two output tokens", recordWith(ok, func(r *Record) { r.OutputTokens = 2 }), timing{1, true}, timing{0.29, true}, timing{1.29, true}},
		{"one output token: no TPOT", recordWith(ok, func(r *Record) { r.OutputTokens = 1 }), timing{}, timing{0.29, true}, timing{1.29, true}},
		{"failed: only from scheduled to the end", Record{Error: "HTTP 500", TTFT: -1, Latency: 0.05, OutputTokens: 0,
			Scheduled: at(0), Submit: at(10), Finish: at(60)}, timing{}, timing{}, timing{0.06, true}},
		{"success without a first token", recordWith(ok, func(r *Record) { r.FirstToken, r.TTFT = time.Time{}, -1 }),
			timing{}, timing{}, timing{1.29, true}},
		{"no scheduled time", recordWith(ok, func(r *Record) { r.Scheduled = time.Time{} }), timing{0.1, true}, timing{}, timing{}},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range []struct {
				name string
				f    func() (float64, bool)
				want timing
			}{{"TPOT", tt.r.TPOT, tt.tpot}, {"TTFTFromScheduled", tt.r.TTFTFromScheduled, tt.ttft}, {"E2EFromScheduled", tt.r.E2EFromScheduled, tt.e2e}} {
				v, ok := c.f()
				if ok != c.want.ok || !near(v, c.want.v) {
					t.Errorf("%s() = %v, %v; want %v, %v", c.name, v, ok, c.want.v, c.want.ok)
				}
			}
		})
	}
}

func recordWith(r Record, edit func(*Record)) Record {
	edit(&r)
	return r
}
