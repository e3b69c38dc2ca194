package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// maxSweepPoints bounds a ladder: more points than this is a typo.
const maxSweepPoints = 1000

// parseSweep reads --sweep KEY=VALUES: a comma list ("1,2,4,8"), a
// geometric range START:STOP:xFACTOR ("1:8:x2"), an arithmetic one
// START:STOP:+STEP ("1:8:+1") or START..STOP (step 1), each from START up
// to STOP inclusive. The values ascend (the stop rules assume a rising
// load).
func parseSweep(spec string) (key string, values []float64, err error) {
	key, list, ok := strings.Cut(spec, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" || strings.TrimSpace(list) == "" {
		return "", nil, fmt.Errorf("--sweep %q: want KEY=VALUES, e.g. mrc_qps=1,2,4,8, mrc_qps=1:8:x2 or max_concurrency=1..8", spec)
	}
	key = strings.ReplaceAll(strings.TrimPrefix(key, "--"), "-", "_")
	bad := func(format string, a ...any) (string, []float64, error) {
		return "", nil, fmt.Errorf("--sweep %s: "+format, append([]any{spec}, a...)...)
	}
	num := func(s string) (float64, bool) {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		return v, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	switch {
	case strings.Contains(list, ".."):
		a, b, _ := strings.Cut(list, "..")
		lo, ok1 := num(a)
		hi, ok2 := num(b)
		if !ok1 || !ok2 {
			return bad("a range is START..STOP with two numbers, got %q", list)
		}
		values, err = steps(lo, hi, func(v float64) float64 { return v + 1 })
	case strings.Contains(list, ":"):
		parts := strings.Split(list, ":")
		if len(parts) != 3 {
			return bad("a range is START:STOP:xFACTOR or START:STOP:+STEP, got %q", list)
		}
		lo, ok1 := num(parts[0])
		hi, ok2 := num(parts[1])
		step := strings.TrimSpace(parts[2])
		by, ok3 := num(strings.TrimLeft(step, "x+*"))
		if !ok1 || !ok2 || !ok3 || len(step) < 2 {
			return bad("a range is START:STOP:xFACTOR or START:STOP:+STEP with numbers, got %q", list)
		}
		switch step[0] {
		case 'x', '*':
			if !(by > 1) || !(lo > 0) {
				return bad("a geometric range needs START above 0 and a FACTOR above 1, got %q", list)
			}
			values, err = steps(lo, hi, func(v float64) float64 { return v * by })
		case '+':
			if !(by > 0) {
				return bad("an arithmetic range needs a STEP above 0, got %q", list)
			}
			values, err = steps(lo, hi, func(v float64) float64 { return v + by })
		default:
			return bad("the step of a range starts with x (a factor) or + (an increment), got %q", step)
		}
	default:
		for _, s := range strings.Split(list, ",") {
			v, ok := num(s)
			if !ok {
				return bad("%q is not a number", strings.TrimSpace(s))
			}
			if len(values) > 0 && v <= values[len(values)-1] {
				return bad("the values must ascend, got %s after %s", formatValue(v), formatValue(values[len(values)-1]))
			}
			values = append(values, v)
		}
	}
	if err != nil {
		return bad("%v", err)
	}
	if len(values) > maxSweepPoints {
		return bad("%d points, at most %d", len(values), maxSweepPoints)
	}
	return key, values, nil
}

// steps are lo, next(lo), … up to hi (within rounding), at least one.
func steps(lo, hi float64, next func(float64) float64) ([]float64, error) {
	if hi < lo {
		return nil, fmt.Errorf("the range ends at %s, below its start %s", formatValue(hi), formatValue(lo))
	}
	var out []float64
	for v := lo; v <= hi*(1+1e-9); v = next(v) {
		// Rounded to 12 significant digits: 0.1+0.2 is 0.3 here.
		r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
		out = append(out, r)
		if len(out) > maxSweepPoints {
			break
		}
	}
	return out, nil
}

// formatValue writes a point's value as a flag takes it ("4", "0.5").
func formatValue(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
