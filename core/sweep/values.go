package sweep

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxPoints bounds a ladder: more points than this is a typo.
const MaxPoints = 1000

// Spec is --sweep KEY=VALUES read: the swept option's configuration key
// and its values, ascending.
type Spec struct {
	// Text is the spec as given, for errors.
	Text   string
	Key    string
	Values []float64
}

// Flag is the swept option's flag ("--mrc-qps").
func (s Spec) Flag() string { return "--" + strings.ReplaceAll(s.Key, "_", "-") }

// CheckWhole refuses a value with a fraction: for an option that takes
// whole numbers.
func (s Spec) CheckWhole() error {
	for _, v := range s.Values {
		if v != math.Trunc(v) {
			return fmt.Errorf("--sweep %s: %s takes whole numbers, got %s", s.Text, s.Key, FormatValue(v))
		}
	}
	return nil
}

// ParseSpec reads --sweep KEY=VALUES: a comma list ("1,2,4,8"), a
// geometric range START:STOP:xFACTOR ("1:8:x2"), an arithmetic one
// START:STOP:+STEP ("1:8:+1") or START..STOP (step 1), each from START up
// to STOP inclusive. The values ascend (the stop rules assume a rising
// load). A key may be written as a flag ("--mrc-qps").
func ParseSpec(text string) (Spec, error) {
	key, list, ok := strings.Cut(text, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" || strings.TrimSpace(list) == "" {
		return Spec{}, fmt.Errorf("--sweep %q: want KEY=VALUES, e.g. mrc_qps=1,2,4,8, mrc_qps=1:8:x2 or max_concurrency=1..8", text)
	}
	key = strings.ReplaceAll(strings.TrimPrefix(key, "--"), "-", "_")
	values, err := parseValues(list)
	if err == nil && len(values) > MaxPoints {
		err = fmt.Errorf("%d points, at most %d", len(values), MaxPoints)
	}
	if err != nil {
		return Spec{}, fmt.Errorf("--sweep %s: %w", text, err)
	}
	return Spec{Text: text, Key: key, Values: values}, nil
}

// parseValues reads the part after KEY=.
func parseValues(list string) ([]float64, error) {
	switch {
	case strings.Contains(list, ".."):
		a, b, _ := strings.Cut(list, "..")
		lo, ok1 := number(a)
		hi, ok2 := number(b)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("a range is START..STOP with two numbers, got %q", list)
		}
		return steps(lo, hi, func(v float64) float64 { return v + 1 })
	case strings.Contains(list, ":"):
		return parseRange(list)
	}
	var values []float64
	for _, s := range strings.Split(list, ",") {
		v, ok := number(s)
		if !ok {
			return nil, fmt.Errorf("%q is not a number", strings.TrimSpace(s))
		}
		if len(values) > 0 && v <= values[len(values)-1] {
			return nil, fmt.Errorf("the values must ascend, got %s after %s", FormatValue(v), FormatValue(values[len(values)-1]))
		}
		values = append(values, v)
	}
	return values, nil
}

// parseRange reads START:STOP:xFACTOR or START:STOP:+STEP.
func parseRange(list string) ([]float64, error) {
	parts := strings.Split(list, ":")
	if len(parts) != 3 {
		return nil, fmt.Errorf("a range is START:STOP:xFACTOR or START:STOP:+STEP, got %q", list)
	}
	lo, ok1 := number(parts[0])
	hi, ok2 := number(parts[1])
	step := strings.TrimSpace(parts[2])
	by, ok3 := number(strings.TrimLeft(step, "x+*"))
	if !ok1 || !ok2 || !ok3 || len(step) < 2 {
		return nil, fmt.Errorf("a range is START:STOP:xFACTOR or START:STOP:+STEP with numbers, got %q", list)
	}
	switch step[0] {
	case 'x', '*':
		if !(by > 1) || !(lo > 0) {
			return nil, fmt.Errorf("a geometric range needs START above 0 and a FACTOR above 1, got %q", list)
		}
		return steps(lo, hi, func(v float64) float64 { return v * by })
	case '+':
		if !(by > 0) {
			return nil, fmt.Errorf("an arithmetic range needs a STEP above 0, got %q", list)
		}
		return steps(lo, hi, func(v float64) float64 { return v + by })
	}
	return nil, fmt.Errorf("the step of a range starts with x (a factor) or + (an increment), got %q", step)
}

// number reads one finite number.
func number(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
}

// steps are lo, next(lo), … up to hi (within rounding), at least one.
func steps(lo, hi float64, next func(float64) float64) ([]float64, error) {
	if hi < lo {
		return nil, fmt.Errorf("the range ends at %s, below its start %s", FormatValue(hi), FormatValue(lo))
	}
	var out []float64
	for v := lo; v <= hi*(1+1e-9); v = next(v) {
		// Rounded to 12 significant digits: 0.1+0.2 is 0.3 here.
		r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
		out = append(out, r)
		if len(out) > MaxPoints {
			break
		}
	}
	return out, nil
}

// FormatValue writes a point's value as a flag takes it ("4", "0.5").
func FormatValue(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
