package stats

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/lmbench/lmbench/core/record"
)

func TestParseSLO(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, canonical, err string
		want               SLO
	}{
		{in: ""},
		{in: "ttft:200,tpot:50", want: SLO{TTFT: 200, TPOT: 50}, canonical: "ttft:200,tpot:50"},
		// vLLM's form: separate words, e2el.
		{in: "tpot:50 ttft:200 e2el:3000.5", want: SLO{TTFT: 200, TPOT: 50, E2E: 3000.5}, canonical: "ttft:200,tpot:50,e2e:3000.5"},
		{in: " ITL:12 ", want: SLO{ITL: 12}, canonical: "itl:12"},
		{in: "ttft", err: `"ttft": want KEY:MILLISECONDS with KEY one of ttft, tpot, itl, e2e (e.g. ttft:200,tpot:50)`},
		{in: "goodput:5", err: `"goodput:5": want KEY:MILLISECONDS with KEY one of ttft, tpot, itl, e2e (e.g. ttft:200,tpot:50)`},
		{in: "ttft:-1", err: `"ttft:-1": the ttft limit must be a number of milliseconds above 0, got "-1"`},
		{in: "e2e:NaN", err: `"e2e:NaN": the e2e limit must be a number of milliseconds above 0, got "NaN"`},
		{in: "ttft:1,ttft:2", err: `"ttft:2": ttft is given twice`},
	}
	for _, tt := range tests {
		got, err := ParseSLO(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseSLO(%q) = %v, %v; want error %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want || got.String() != tt.canonical {
			t.Errorf("ParseSLO(%q) = %+v (%q), %v; want %+v (%q)", tt.in, got, got.String(), err, tt.want, tt.canonical)
		}
	}
}

// sent is a measured request due at due and submitted at submit (seconds
// after t0), with an explicit schedule.
func sent(r record.Record, due, submit float64) record.Record {
	r.Scheduled, r.ExplicitSchedule = at(due), true
	r.Submit = at(submit)
	return r
}

// The load figures come from the submit and due times; goodput judges
// every measured request against every limit set, a failed one meeting
// none, a 1-token answer meeting TPOT and ITL (no gap to miss).
func TestJudge(t *testing.T) {
	t.Parallel()
	recs := []record.Record{
		sent(answer(0.1, 0.5, 5, 100_000, 150_000, 400_000), 0, 0), // ITL max 250 ms, TPOT 100 ms
		sent(answer(0.3, 0.4, 3, 300_000, 320_000, 340_000), 1, 1.5),
		sent(answer(0.05, 0.06, 1, 50_000), 2, 2.001),
		sent(failed(0.2), 3, 3),
	}
	b := NewBuilder(t0, len(recs), Options{})
	for i := range recs {
		b.Add(&recs[i])
	}
	f := b.Final([]float64{50})
	if !math.IsNaN(f.Load.RequestedRate) || !math.IsNaN(f.Goodput.Rate) || f.Goodput.SLO.Set() {
		t.Errorf("before Judge: requested %v, goodput %v: want n/a", f.Load.RequestedRate, f.Goodput.Rate)
	}
	b.Judge(&f, 1.25, SLO{TTFT: 200, TPOT: 60, ITL: 100})
	l := f.Load
	// 4 submits over 3 s: 1 req/s of 1.25 requested; slips 0, 500, 1
	// and 0 ms.
	approx := cmpopts.EquateApprox(0, 1e-9)
	if d := cmp.Diff([]float64{1.25, 1, 0.8, 125.25, 500, 3 / f.ElapsedTime},
		[]float64{l.RequestedRate, l.SendRate, l.Achieved(), l.Slip.Mean, l.SlipMax, l.CompletionRate}, approx); d != "" {
		t.Errorf("load: requested, send, achieved, slip mean and max, completion (-want +got):\n%s", d)
	}
	if want := "requests went out at 1.00 req/s, 80.0% of the 1.25 req/s requested: the client or the engine could not keep up (see the schedule slip)"; l.Warning() != want {
		t.Errorf("warning %q, want %q", l.Warning(), want)
	}
	g := f.Goodput
	// TTFT: 100, 300, 50 ms -> 2 of 4 meet 200. TPOT: 100, 50, 0 -> 2.
	// ITL: 250, 20, 0 -> 2. Good: only the 1-token answer meets all.
	want := Goodput{SLO: SLO{TTFT: 200, TPOT: 60, ITL: 100}, Good: 1, Rate: 1 / f.ElapsedTime,
		TTFT: 0.5, TPOT: 0.5, ITL: 0.5, E2E: math.NaN(), All: 0.25}
	if d := cmp.Diff(want, g, cmpopts.EquateNaNs(), approx); d != "" {
		t.Errorf("goodput (-want +got):\n%s", d)
	}

	// No requested rate, no SLO: n/a; a burst sent at one instant has no
	// send rate.
	b = NewBuilder(t0, 2, Options{})
	burst := []record.Record{sent(answer(0.1, 0.2, 1), 0, 0), sent(answer(0.1, 0.2, 1), 0, 0)}
	for i := range burst {
		b.Add(&burst[i])
	}
	f = b.Final(nil)
	b.Judge(&f, 0, SLO{})
	if !math.IsNaN(f.Load.RequestedRate) || !math.IsNaN(f.Load.SendRate) || !math.IsNaN(f.Load.Achieved()) ||
		f.Load.Warning() != "" || !math.IsNaN(f.Goodput.All) || f.Goodput.Good != 0 {
		t.Errorf("load %+v goodput %+v: want n/a figures", f.Load, f.Goodput)
	}
}
