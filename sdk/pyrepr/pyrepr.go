package pyrepr

import (
	"math"
	"strconv"
	"strings"
)

// Float returns Python's repr(f): the shortest digits that round-trip, in
// fixed notation when the decimal exponent is in [-4, 16) with ".0" added to
// integral values ("100.0", "0.0001", "123456789012345.0"), otherwise in
// scientific notation with a signed, at least two-digit exponent ("1e-05",
// "1.5e-07", "1e+16"). Non-finite values print as "nan", "inf" and "-inf".
func Float(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}

	// Go's shortest round-trip digits equal CPython's (both pick the
	// shortest string that reads back to f, nearest to f on ties); only the
	// layout differs, so take digits and exponent from the 'e' form.
	s := strconv.FormatFloat(f, 'e', -1, 64) // "-d.ddde±XX"
	var b strings.Builder
	if s[0] == '-' {
		b.WriteByte('-')
		s = s[1:]
	}
	mant, expText, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expText) // FormatFloat always writes a valid exponent
	digits := strings.Replace(mant, ".", "", 1)

	if exp < -4 || exp >= 16 {
		b.WriteString(digits[:1])
		if len(digits) > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if exp < 0 {
			b.WriteByte('-')
			exp = -exp
		} else {
			b.WriteByte('+')
		}
		if exp < 10 {
			b.WriteByte('0')
		}
		b.WriteString(strconv.Itoa(exp))
		return b.String()
	}

	switch point := exp + 1; {
	case point <= 0: // 0.000ddd
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -point))
		b.WriteString(digits)
	case point >= len(digits): // ddd000.0
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", point-len(digits)))
		b.WriteString(".0")
	default: // dd.ddd
		b.WriteString(digits[:point])
		b.WriteByte('.')
		b.WriteString(digits[point:])
	}
	return b.String()
}

// JSONFloat returns what Python's json.dumps writes for f: repr(f) for
// finite values and "NaN", "Infinity", "-Infinity" otherwise (Python's
// default allow_nan=True output, which is not strict JSON).
func JSONFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return Float(f)
}

// Bool returns Python's str(b): "True" or "False".
func Bool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}
