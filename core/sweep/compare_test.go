package sweep

import (
	"strings"
	"testing"
)

func f(v float64) *float64 { return &v }

// point is a completed ladder point at value v: TTFT and TPOT p50, and
// completions at the given share of its sends.
func point(v, ttft, tpot, completed float64) Point {
	return Point{Value: v, Status: Completed, P50TTFTMs: f(ttft), P50TPOTMs: f(tpot), AchievedSendRate: f(v), CompletionRate: f(v * completed)}
}

// TestPredict pairs a predicted sweep with a measured one by value,
// whichever comes first: the error per point, and where each fell behind.
func TestPredict(t *testing.T) {
	t.Parallel()
	profile := "profile.json"
	pred := &Result{Key: "tr_speedup", Values: []float64{4, 8, 16}, PredictedFrom: &profile,
		Points: []Point{point(4, 110, 10, 1), point(8, 150, 12, 0.95), point(16, 900, 20, 0.7)}}
	meas := &Result{Key: "tr_speedup", Values: []float64{4, 8, 16},
		Points: []Point{point(4, 100, 10, 1), point(8, 160, 12.5, 0.8), point(16, 1200, 21, 0.6)}}
	p, err := Predict(meas, pred)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Points) != 3 || p.Profile != profile {
		t.Fatalf("%d points, profile %q; want 3 and %q", len(p.Points), p.Profile, profile)
	}
	if e := *p.Points[0].TTFTError; e < 0.0999 || e > 0.1001 {
		t.Errorf("TTFT error at 4 = %v, want +10%%", e)
	}
	if e := *p.Points[1].TPOTError; e < -0.0401 || e > -0.0399 {
		t.Errorf("TPOT error at 8 = %v, want -4%%", e)
	}
	if *p.SaturatedPredicted != 16 || *p.SaturatedMeasured != 8 || *p.Steps != 1 {
		t.Errorf("saturated at predicted %v, measured %v, %v steps apart; want 16, 8, 1", *p.SaturatedPredicted, *p.SaturatedMeasured, *p.Steps)
	}
	var b strings.Builder
	p.WriteText(&b)
	if !strings.Contains(b.String(), "+10.0%") || !strings.Contains(b.String(), "predicted 16, measured 8 (1 ladder steps apart)") {
		t.Errorf("text:\n%s", b.String())
	}
	if _, err := Predict(meas, meas); err == nil || !strings.Contains(err.Error(), "neither sweep is predicted") {
		t.Errorf("two measured sweeps: %v; want refused", err)
	}
}
