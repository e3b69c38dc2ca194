package sweep

import (
	"errors"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// Prediction sets a predicted sweep (one run on a twin, PredictedFrom
// set) beside a measured one of the same option, point by point at the
// values both ran (docs/twin.md).
type Prediction struct {
	Key                 string
	Profile             string
	Predicted, Measured *Result `json:"-"`
	Points              []PointPrediction
	// SaturatedPredicted and SaturatedMeasured are the lowest value at
	// which each saturated (Behind), nil when none did; Steps is how many
	// ladder steps apart they are (nil unless both saturated).
	SaturatedPredicted, SaturatedMeasured *float64
	Steps                                 *int
}

// PointPrediction is one value both sweeps ran: the predicted and the
// measured point, and the relative error (predicted − measured) /
// measured of TTFT p50 and TPOT p50 (nil where either is undefined).
type PointPrediction struct {
	Value               float64
	Predicted, Measured Point
	TTFTError           *float64
	TPOTError           *float64
}

// BehindBelow: a point whose completions ran below this share of its
// sends fell behind, the engine's queue growing: saturated, though an open
// loop still sent on time.
const BehindBelow = 0.90

// Behind says whether p saturated: its sends fell short (Saturated), or
// its completions fell behind its sends.
func Behind(p Point) bool {
	if p.Saturated {
		return true
	}
	return p.CompletionRate != nil && p.AchievedSendRate != nil && *p.AchievedSendRate > 0 &&
		*p.CompletionRate < BehindBelow**p.AchievedSendRate
}

// Predict pairs a and b, one of which must be predicted and the other
// measured, both of the same option. An error says which is wrong.
func Predict(a, b *Result) (*Prediction, error) {
	pred, meas := a, b
	if pred.PredictedFrom == nil {
		pred, meas = b, a
	}
	switch {
	case pred.PredictedFrom == nil:
		return nil, errors.New("neither sweep is predicted (a sweep run with --engine-url builtin --sim-profile FILE is)")
	case meas.PredictedFrom != nil:
		return nil, errors.New("both sweeps are predicted: compare a predicted sweep with a measured one")
	case pred.Key != meas.Key:
		return nil, fmt.Errorf("the sweeps vary different options: %s and %s", pred.Key, meas.Key)
	}
	out := &Prediction{Key: pred.Key, Profile: *pred.PredictedFrom, Predicted: pred, Measured: meas}
	for _, m := range meas.Points {
		for _, p := range pred.Points {
			if p.Value != m.Value || p.Search || m.Search {
				continue
			}
			out.Points = append(out.Points, PointPrediction{Value: m.Value, Predicted: p, Measured: m,
				TTFTError: relError(p.P50TTFTMs, m.P50TTFTMs), TPOTError: relError(p.P50TPOTMs, m.P50TPOTMs)})
		}
	}
	out.SaturatedPredicted, out.SaturatedMeasured = firstBehind(pred), firstBehind(meas)
	if out.SaturatedPredicted != nil && out.SaturatedMeasured != nil {
		steps := ladderIndex(meas.Values, *out.SaturatedPredicted) - ladderIndex(meas.Values, *out.SaturatedMeasured)
		out.Steps = &steps
	}
	return out, nil
}

func relError(p, m *float64) *float64 {
	if p == nil || m == nil || *m == 0 || math.IsNaN(*p) || math.IsNaN(*m) {
		return nil
	}
	e := (*p - *m) / *m
	return &e
}

// firstBehind is the lowest ladder value that saturated (nil: none).
func firstBehind(r *Result) *float64 {
	var out *float64
	for _, p := range r.Points {
		if !p.Search && Behind(p) && (out == nil || p.Value < *out) {
			v := p.Value
			out = &v
		}
	}
	return out
}

// ladderIndex is v's place in the ladder values (where it would go when
// it is not one).
func ladderIndex(values []float64, v float64) int {
	for i, x := range values {
		if x >= v {
			return i
		}
	}
	return len(values)
}

// WriteText prints the prediction's points: TTFT p50 and TPOT p50
// predicted against measured with the error, and where each saturated.
func (c *Prediction) WriteText(w io.Writer) {
	fmt.Fprintf(w, "prediction (twin profile %s) against measurement, by %s\n", c.Profile, c.Key)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, c.Key+"\tTTFT p50 ms predicted\tmeasured\terror\tTPOT p50 ms predicted\tmeasured\terror\tsaturated predicted\tmeasured\t")
	for _, p := range c.Points {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%v\t%v\t\n", FormatValue(p.Value),
			opt(p.Predicted.P50TTFTMs, "%.1f"), opt(p.Measured.P50TTFTMs, "%.1f"), signedShare(p.TTFTError),
			opt(p.Predicted.P50TPOTMs, "%.2f"), opt(p.Measured.P50TPOTMs, "%.2f"), signedShare(p.TPOTError),
			yesNo(Behind(p.Predicted)), yesNo(Behind(p.Measured)))
	}
	tw.Flush()
	show := func(v *float64) string {
		if v == nil {
			return "none"
		}
		return FormatValue(*v)
	}
	fmt.Fprintf(w, "saturates at: predicted %s, measured %s", show(c.SaturatedPredicted), show(c.SaturatedMeasured))
	if c.Steps != nil {
		fmt.Fprintf(w, " (%d ladder steps apart)", *c.Steps)
	}
	fmt.Fprintln(w)
}

func signedShare(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", *v*100)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
