package option_test

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
)

type policy string

type allTypes struct {
	Name     string        `opt:"name" help:"A name." label:"Name" group:"basic"`
	Count    int           `opt:"count" help:"How many." min:"1" max:"10"`
	Big      int64         `opt:"big"`
	Ratio    float64       `opt:"ratio" min:"0" max:"0.5"`
	Verbose  bool          `opt:"verbose" advanced:"true"`
	Timeout  time.Duration `opt:"timeout" min:"1000000000"`
	Shuffle  string        `opt:"shuffle" enum:"random,tile"`
	Policy   policy        `opt:"policy" enum:"lru,fifo"`
	Untagged int
	private  int `opt:"private"`
}

func ptr(f float64) *float64 { return &f }

func TestSpecs(t *testing.T) {
	t.Parallel()
	defaults := allTypes{Name: "n", Count: 3, Big: 1 << 40, Ratio: 0.25, Verbose: true,
		Timeout: 2 * time.Second, Shuffle: "tile", Policy: "lru", Untagged: 7, private: 1}
	got, err := option.Specs(defaults)
	if err != nil {
		t.Fatal(err)
	}
	// Defaults travel as string, int64, float64 or bool (durations as
	// nanoseconds, named types by kind).
	want := []protocol.OptionSpec{
		{Name: "name", Type: protocol.OptionString, Help: "A name.", Label: "Name", Group: "basic", Default: "n"},
		{Name: "count", Type: protocol.OptionInt, Help: "How many.", Min: ptr(1), Max: ptr(10), Default: int64(3)},
		{Name: "big", Type: protocol.OptionInt, Default: int64(1 << 40)},
		{Name: "ratio", Type: protocol.OptionFloat, Min: ptr(0), Max: ptr(0.5), Default: 0.25},
		{Name: "verbose", Type: protocol.OptionBool, Advanced: true, Default: true},
		{Name: "timeout", Type: protocol.OptionDuration, Min: ptr(1e9), Default: int64(2 * time.Second)},
		{Name: "shuffle", Type: protocol.OptionEnum, Enum: []string{"random", "tile"}, Default: "tile"},
		{Name: "policy", Type: protocol.OptionEnum, Enum: []string{"lru", "fifo"}, Default: "lru"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Specs (-want +got):\n%s", d)
	}
}

type (
	badName struct {
		X int `opt:"Bad_Name"`
	}
	badTrailing struct {
		X int `opt:"trailing-"`
	}
	badDuplicate struct {
		A int `opt:"same"`
		B int `opt:"same"`
	}
	badType struct {
		X int32 `opt:"x"`
	}
	badSlice struct {
		X []string `opt:"x"`
	}
	badEnum struct {
		P string `opt:"p" enum:"a,b"`
	}
	badMin struct {
		X int `opt:"x" min:"one"`
	}
	badMax struct {
		X float64 `opt:"x" max:"1e"`
	}
	badBothBound struct {
		X int `opt:"x" min:"?" max:"!"`
	}
)

func TestSpecsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		defaults any
		want     string
	}{
		{"not kebab-case", badName{}, `field X: opt name "Bad_Name" must be kebab-case`},
		{"trailing dash", badTrailing{}, `field X: opt name "trailing-" must be kebab-case`},
		{"duplicate", badDuplicate{}, `field B: duplicate opt name "same"`},
		{"int32", badType{}, "field X: unsupported option type int32"},
		{"slice", badSlice{}, "field X: unsupported option type []string"},
		{"enum default", badEnum{P: "c"}, `option p: default "c" is not one of [a b]`},
		{"empty enum default", badEnum{}, `option p: default "" is not one of [a b]`},
		{"min not a number", badMin{}, `field X: min tag "one" is not a number`},
		{"max not a number", badMax{}, `field X: max tag "1e" is not a number`},
		{"min reported first", badBothBound{}, `field X: min tag "?" is not a number`},
		{"not a struct", 5, "options must be a struct, got int"},
		{"pointer", &allTypes{}, "options must be a struct, got *option_test.allTypes"},
		{"nil", nil, "options must be a struct, got nil"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := option.Specs(tc.defaults)
			if err == nil {
				t.Fatalf("Specs(%#v) = nil error, want %q", tc.defaults, tc.want)
			}
			if d := cmp.Diff(tc.want, err.Error()); d != "" {
				t.Errorf("error (-want +got):\n%s", d)
			}
		})
	}
}

type decodeOpts struct {
	S   string        `opt:"s"`
	I   int           `opt:"i" min:"1" max:"100"`
	I64 int64         `opt:"i64"`
	F   float64       `opt:"f" min:"0.5"`
	B   bool          `opt:"b"`
	D   time.Duration `opt:"d"`
	E   string        `opt:"e" enum:"x,y"`
	P   policy        `opt:"p"`
}

var decodeDefaults = decodeOpts{S: "s", I: 1, I64: 2, F: 1, D: time.Second, E: "x", P: "lru"}

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		values  protocol.Values
		want    decodeOpts
		wantErr string
	}{
		{name: "defaults", want: decodeDefaults},
		{
			name: "every type",
			values: protocol.Values{
				"s": "hi", "i": int64(5), "i64": float64(7), "f": int64(3), "b": true,
				"d": int64(2 * time.Minute), "e": "y", "p": "fifo",
			},
			want: decodeOpts{S: "hi", I: 5, I64: 7, F: 3, B: true, D: 2 * time.Minute, E: "y", P: "fifo"},
		},
		{name: "int from integral float", values: protocol.Values{"i": float64(42)},
			want: decodeOpts{S: "s", I: 42, I64: 2, F: 1, D: time.Second, E: "x", P: "lru"}},
		{name: "duration from integral float", values: protocol.Values{"d": float64(5e8)},
			want: decodeOpts{S: "s", I: 1, I64: 2, F: 1, D: 500 * time.Millisecond, E: "x", P: "lru"}},
		{name: "non-integral float for int", values: protocol.Values{"i": float64(1.5)},
			wantErr: "i: expected an integer, got 1.5"},
		{name: "float beyond int64", values: protocol.Values{"i64": float64(1e19)},
			wantErr: "i64: expected an integer, got 1e+19"},
		{name: "NaN for int", values: protocol.Values{"i": math.NaN()},
			wantErr: "i: expected an integer, got NaN"},
		{name: "non-integral float for duration", values: protocol.Values{"d": float64(0.5)},
			wantErr: "d: expected a duration, got 0.5"},
		{name: "string for duration", values: protocol.Values{"d": "1s"},
			wantErr: `d: expected a duration, got "1s"`},
		{name: "int for string", values: protocol.Values{"s": int64(3)},
			wantErr: "s: expected a string, got 3"},
		{name: "string for bool", values: protocol.Values{"b": "yes"},
			wantErr: `b: expected a boolean, got "yes"`},
		{name: "bool for float", values: protocol.Values{"f": true},
			wantErr: "f: expected a number, got true"},
		{name: "nil value", values: protocol.Values{"i": nil},
			wantErr: "i: expected an integer, got nothing"},
		{name: "unknown option", values: protocol.Values{"nope": int64(1)},
			wantErr: "nope: unknown option"},
		{name: "all problems, sorted by name",
			values:  protocol.Values{"zz": int64(1), "s": int64(1), "aa": int64(1)},
			wantErr: "aa: unknown option\ns: expected a string, got 1\nzz: unknown option"},
		{name: "below min", values: protocol.Values{"i": int64(0)},
			wantErr: "i: must be >= 1, got 0"},
		{name: "above max", values: protocol.Values{"i": int64(101)},
			wantErr: "i: must be <= 100, got 101"},
		{name: "float below min", values: protocol.Values{"f": float64(0.25)},
			wantErr: "f: must be >= 0.5, got 0.25"},
		{name: "several bounds", values: protocol.Values{"i": int64(0), "f": float64(0)},
			wantErr: "i: must be >= 1, got 0\nf: must be >= 0.5, got 0"},
		{name: "enum", values: protocol.Values{"e": "z"},
			wantErr: `e: must be one of x, y, got "z"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := option.Decode(decodeDefaults, tc.values)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("Decode = %+v, nil error; want %q", got, tc.wantErr)
				}
				if d := cmp.Diff(tc.wantErr, err.Error()); d != "" {
					t.Errorf("error (-want +got):\n%s", d)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Decode (-want +got):\n%s", d)
			}
		})
	}
}

func TestDecodeLeavesDefaultsAlone(t *testing.T) {
	t.Parallel()
	defaults := decodeOpts{S: "s", I: 1, F: 1, E: "x"}
	if _, err := option.Decode(defaults, protocol.Values{"s": "changed"}); err != nil {
		t.Fatal(err)
	}
	if defaults.S != "s" {
		t.Errorf("Decode changed its defaults argument: S = %q", defaults.S)
	}
}

// ptrValidated has Validate on the pointer receiver; its messages must win
// over the generic bound check on the same option.
type ptrValidated struct {
	N int `opt:"n" min:"1"`
}

func (o *ptrValidated) Validate() error {
	if o.N < 1 {
		return option.Errorf("n", "n must be positive, got %d", o.N)
	}
	if o.N == 13 {
		return errors.New("13 is unlucky")
	}
	return nil
}

// valValidated has Validate on the value receiver and reports several
// options at once.
type valValidated struct {
	A int    `opt:"a"`
	B int    `opt:"b"`
	E string `opt:"e" enum:"x,y"`
}

func (o valValidated) Validate() error {
	var errs []error
	if o.A < 0 {
		errs = append(errs, option.Errorf("a", "a must not be negative, got %d", o.A))
	}
	if o.B < 0 {
		errs = append(errs, fmt.Errorf("checking b: %w", option.Errorf("b", "b must not be negative, got %d", o.B)))
	}
	if o.E == "bad" {
		errs = append(errs, option.Errorf("e", "e cannot be %q, pick x or y", o.E))
	}
	return errors.Join(errs...)
}

// checked has both schema bounds and a Validate that reports, or panics
// on, some values.
type checked struct {
	N int    `opt:"n" min:"1"`
	M int    `opt:"m" max:"10"`
	S string `opt:"s"`
}

func (o checked) Validate() error {
	if o.S == "panic" {
		panic("s is panic")
	}
	var errs []error
	if o.N < 1 {
		errs = append(errs, option.Errorf("n", "n must be positive, got %d", o.N))
	}
	if o.S == "bad" {
		errs = append(errs, option.Errorf("s", "s cannot be bad"))
	}
	return errors.Join(errs...)
}

func decodeChecked(values protocol.Values) func() error {
	return func() error {
		_, err := option.Decode(checked{N: 1}, values)
		return err
	}
}

func TestDecodeValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func() error
		want []*option.FieldError
	}{
		{
			name: "pointer receiver wins over min",
			run: func() error {
				_, err := option.Decode(ptrValidated{N: 1}, protocol.Values{"n": int64(0)})
				return err
			},
			want: []*option.FieldError{{Option: "n", Message: "n must be positive, got 0"}},
		},
		{
			name: "plain error has no option",
			run: func() error {
				_, err := option.Decode(ptrValidated{N: 13}, nil)
				return err
			},
			want: []*option.FieldError{{Message: "13 is unlucky"}},
		},
		{
			name: "value receiver, several options",
			run: func() error {
				_, err := option.Decode(valValidated{E: "x"}, protocol.Values{"a": int64(-1), "b": int64(-2)})
				return err
			},
			want: []*option.FieldError{
				{Option: "a", Message: "a must not be negative, got -1"},
				{Option: "b", Message: "b must not be negative, got -2"},
			},
		},
		{
			name: "validate wins over enum",
			run: func() error {
				_, err := option.Decode(valValidated{E: "x"}, protocol.Values{"e": "bad"})
				return err
			},
			want: []*option.FieldError{{Option: "e", Message: `e cannot be "bad", pick x or y`}},
		},
		{
			name: "bounds still checked when validate passes",
			run: func() error {
				_, err := option.Decode(valValidated{E: "x"}, protocol.Values{"e": "z"})
				return err
			},
			want: []*option.FieldError{{Option: "e", Message: `must be one of x, y, got "z"`}},
		},
		{
			name: "valid",
			run: func() error {
				_, err := option.Decode(ptrValidated{N: 1}, protocol.Values{"n": int64(2)})
				return err
			},
		},
		// The schema is checked first, then Validate, and every problem is
		// reported together.
		{
			name: "a bound and an unrelated Validate error are both reported",
			run:  decodeChecked(protocol.Values{"m": int64(11), "s": "bad"}),
			want: []*option.FieldError{
				{Option: "m", Message: "must be <= 10, got 11"},
				{Option: "s", Message: "s cannot be bad"},
			},
		},
		{
			name: "an option reported by a bound and by Validate is reported once, in Validate's words",
			run:  decodeChecked(protocol.Values{"n": int64(0), "m": int64(11)}),
			want: []*option.FieldError{
				{Option: "m", Message: "must be <= 10, got 11"},
				{Option: "n", Message: "n must be positive, got 0"},
			},
		},
		{
			name: "a mistyped value and a Validate error on another option are both reported",
			run:  decodeChecked(protocol.Values{"m": "ten", "s": "bad"}),
			want: []*option.FieldError{
				{Option: "m", Message: `expected an integer, got "ten"`},
				{Option: "s", Message: "s cannot be bad"},
			},
		},
		{
			name: "an unknown option and a Validate error are both reported",
			run:  decodeChecked(protocol.Values{"nope": int64(1), "s": "bad"}),
			want: []*option.FieldError{
				{Option: "nope", Message: "unknown option"},
				{Option: "s", Message: "s cannot be bad"},
			},
		},
		{
			// Validate saw the default (0) for the mistyped n, so what it
			// says about n is not about the value the user gave.
			name: "a Validate error about a mistyped option is dropped",
			run: func() error {
				_, err := option.Decode(checked{N: 0}, protocol.Values{"n": "one"})
				return err
			},
			want: []*option.FieldError{{Option: "n", Message: `expected an integer, got "one"`}},
		},
		{
			name: "a Validate that panics is an error",
			run:  decodeChecked(protocol.Values{"s": "panic"}),
			want: []*option.FieldError{{Message: "the options' Validate method panicked: s is panic"}},
		},
		{
			name: "a Validate that panics, and a bound",
			run:  decodeChecked(protocol.Values{"s": "panic", "m": int64(11)}),
			want: []*option.FieldError{
				{Option: "m", Message: "must be <= 10, got 11"},
				{Message: "the options' Validate method panicked: s is panic"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if d := cmp.Diff(tc.want, option.FieldErrors(tc.run())); d != "" {
				t.Errorf("FieldErrors (-want +got):\n%s", d)
			}
		})
	}
}

func TestFieldErrors(t *testing.T) {
	t.Parallel()
	a := option.Errorf("a", "bad %d", 1)
	b := &option.FieldError{Option: "b", Message: "worse"}
	tests := []struct {
		name string
		err  error
		want []*option.FieldError
	}{
		{"nil", nil, nil},
		{"field error", a, []*option.FieldError{a}},
		{"wrapped", fmt.Errorf("context: %w", a), []*option.FieldError{a}},
		{"plain", errors.New("boom"), []*option.FieldError{{Message: "boom"}}},
		{"joined and nested", errors.Join(a, errors.Join(b, errors.New("boom"))),
			[]*option.FieldError{a, b, {Message: "boom"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if d := cmp.Diff(tc.want, option.FieldErrors(tc.err)); d != "" {
				t.Errorf("FieldErrors (-want +got):\n%s", d)
			}
		})
	}
}

func TestFieldErrorMessage(t *testing.T) {
	t.Parallel()
	if got, want := option.Errorf("document-length", "must be >= %d, got %d", 1, 0).Error(), "document-length: must be >= 1, got 0"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := (&option.FieldError{Message: "no option"}).Error(), "no option"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   any
		want any // the value as it travels
	}{
		{"string", "hello", "hello"},
		{"empty string", "", ""},
		{"bool", true, true},
		{"int", 42, int64(42)},
		{"negative int64", int64(-7), int64(-7)},
		{"float64", 0.25, 0.25},
		{"duration as nanoseconds", 3 * time.Second, int64(3 * time.Second)},
		{"named string", policy("lru"), "lru"},
		{"unsupported int32", int32(1), nil},
		{"unsupported slice", []string{"a"}, nil},
		{"nil", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if d := cmp.Diff(tc.want, option.Value(tc.in)); d != "" {
				t.Errorf("Value(%#v) (-want +got):\n%s", tc.in, d)
			}
		})
	}
}

func TestValues(t *testing.T) {
	t.Parallel()
	got, err := option.Values(map[string]any{"n": 3, "d": time.Second, "p": policy("fifo"), "r": 0.5, "on": true})
	if err != nil {
		t.Fatal(err)
	}
	want := protocol.Values{"n": int64(3), "d": int64(time.Second), "p": "fifo", "r": 0.5, "on": true}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Values (-want +got):\n%s", d)
	}
	if _, err := option.Values(map[string]any{"x": []int{1}}); err == nil || err.Error() != "option x: unsupported Go type []int" {
		t.Errorf("Values with a slice: error %v, want %q", err, "option x: unsupported Go type []int")
	}
}

// The schema's defaults, sent back as values, decode to the original.
func TestSpecDefaultsDecode(t *testing.T) {
	t.Parallel()
	want := decodeOpts{S: "x", I: 9, I64: -3, F: 2.5, B: true, D: time.Minute, E: "y", P: "fifo"}
	specs, err := option.Specs(want)
	if err != nil {
		t.Fatal(err)
	}
	values := protocol.Values{}
	for _, sp := range specs {
		values[sp.Name] = sp.Default
	}
	got, err := option.Decode(decodeDefaults, values)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	err := errors.Join(option.Errorf("a", "bad"), errors.New("boom"))
	want := []protocol.FieldError{{Option: "a", Message: "bad"}, {Message: "boom"}}
	if d := cmp.Diff(want, option.Errors(err)); d != "" {
		t.Errorf("Errors (-want +got):\n%s", d)
	}
	if got := option.Errors(nil); got != nil {
		t.Errorf("Errors(nil) = %v, want nil", got)
	}
}
