package pyrepr_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/pyrepr"
)

func TestFloat(t *testing.T) {
	t.Parallel()
	tenth, fifth := 0.1, 0.2 // variables, so the sum is rounded at run time as in Python
	tests := []struct {
		in   float64
		want string
	}{
		{100, "100.0"},
		{0.001, "0.001"},
		{0.0001, "0.0001"},
		{123456789012345, "123456789012345.0"},
		{1e15, "1000000000000000.0"},
		{1e-5, "1e-05"},
		{1.5e-7, "1.5e-07"},
		{1e16, "1e+16"},
		{1.2345e20, "1.2345e+20"},
		{1e100, "1e+100"},
		{5e-324, "5e-324"},
		{tenth + fifth, "0.30000000000000004"},
		{1.0 / 3, "0.3333333333333333"},
		{-2.5, "-2.5"},
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{math.NaN(), "nan"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, pyrepr.Float(tt.in)); diff != "" {
				t.Errorf("Float(%v) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestJSONFloat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   float64
		want string
	}{
		{16260.2, "16260.2"},
		{100, "100.0"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, pyrepr.JSONFloat(tt.in)); diff != "" {
				t.Errorf("JSONFloat(%v) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestBool(t *testing.T) {
	t.Parallel()
	if diff := cmp.Diff([]string{"True", "False"}, []string{pyrepr.Bool(true), pyrepr.Bool(false)}); diff != "" {
		t.Errorf("Bool mismatch (-want +got):\n%s", diff)
	}
}

// TestFloatGolden compares against repr() and json.dumps() of CPython for
// about a thousand values (testdata/float.json, written by testdata/gen.py).
func TestFloatGolden(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/float.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Python string      `json:"python"`
		Floats [][4]string `json:"floats"` // bits (hex), note, repr, json.dumps
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatalf("testdata/float.json: %v", err)
	}
	if len(golden.Floats) < 500 {
		t.Fatalf("testdata/float.json: want at least 500 values, got %d", len(golden.Floats))
	}
	for i, row := range golden.Floats {
		b, err := strconv.ParseUint(row[0], 16, 64)
		if err != nil {
			t.Fatalf("testdata/float.json row %d: bits %q: %v", i, row[0], err)
		}
		f := math.Float64frombits(b)
		if got := pyrepr.Float(f); got != row[2] {
			t.Errorf("row %d (%s, bits %s): Float = %q, python %s repr = %q", i, row[1], row[0], got, golden.Python, row[2])
		}
		if got := pyrepr.JSONFloat(f); got != row[3] {
			t.Errorf("row %d (%s, bits %s): JSONFloat = %q, python %s json.dumps = %q", i, row[1], row[0], got, golden.Python, row[3])
		}
	}
}

func ExampleFloat() {
	for _, f := range []float64{100, 2.0 / 3 * 1000, 0.0001, 1e-5, 1e16} {
		fmt.Println(pyrepr.Float(f))
	}
	// Output:
	// 100.0
	// 666.6666666666666
	// 0.0001
	// 1e-05
	// 1e+16
}
