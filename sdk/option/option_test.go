package option_test

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/lmbench/lmbench/sdk/option"
	pluginv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/plugin/v1"
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

func sv(s string) *pluginv1.OptionValue {
	return &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_StringValue{StringValue: s}}
}
func iv(i int64) *pluginv1.OptionValue {
	return &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_IntValue{IntValue: i}}
}
func fv(f float64) *pluginv1.OptionValue {
	return &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_FloatValue{FloatValue: f}}
}
func bv(b bool) *pluginv1.OptionValue {
	return &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_BoolValue{BoolValue: b}}
}

func TestSpecs(t *testing.T) {
	t.Parallel()
	defaults := allTypes{Name: "n", Count: 3, Big: 1 << 40, Ratio: 0.25, Verbose: true,
		Timeout: 2 * time.Second, Shuffle: "tile", Policy: "lru", Untagged: 7, private: 1}
	got, err := option.Specs(defaults)
	if err != nil {
		t.Fatal(err)
	}
	want := []*pluginv1.OptionSpec{
		{Name: "name", Type: pluginv1.OptionType_OPTION_TYPE_STRING, Help: "A name.", Label: "Name", Group: "basic", Default: sv("n")},
		{Name: "count", Type: pluginv1.OptionType_OPTION_TYPE_INT, Help: "How many.", Min: proto.Float64(1), Max: proto.Float64(10), Default: iv(3)},
		{Name: "big", Type: pluginv1.OptionType_OPTION_TYPE_INT, Default: iv(1 << 40)},
		{Name: "ratio", Type: pluginv1.OptionType_OPTION_TYPE_FLOAT, Min: proto.Float64(0), Max: proto.Float64(0.5), Default: fv(0.25)},
		{Name: "verbose", Type: pluginv1.OptionType_OPTION_TYPE_BOOL, Advanced: true, Default: bv(true)},
		{Name: "timeout", Type: pluginv1.OptionType_OPTION_TYPE_DURATION, Min: proto.Float64(1e9), Default: iv(int64(2 * time.Second))},
		{Name: "shuffle", Type: pluginv1.OptionType_OPTION_TYPE_ENUM, EnumValues: []string{"random", "tile"}, Default: sv("tile")},
		{Name: "policy", Type: pluginv1.OptionType_OPTION_TYPE_ENUM, EnumValues: []string{"lru", "fifo"}, Default: sv("lru")},
	}
	if d := cmp.Diff(want, got, protocmp.Transform()); d != "" {
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
		values  map[string]*pluginv1.OptionValue
		want    decodeOpts
		wantErr string
	}{
		{name: "defaults", want: decodeDefaults},
		{
			name: "every type",
			values: map[string]*pluginv1.OptionValue{
				"s": sv("hi"), "i": iv(5), "i64": fv(7), "f": iv(3), "b": bv(true),
				"d": iv(int64(2 * time.Minute)), "e": sv("y"), "p": sv("fifo"),
			},
			want: decodeOpts{S: "hi", I: 5, I64: 7, F: 3, B: true, D: 2 * time.Minute, E: "y", P: "fifo"},
		},
		{name: "int from integral float", values: map[string]*pluginv1.OptionValue{"i": fv(42)},
			want: decodeOpts{S: "s", I: 42, I64: 2, F: 1, D: time.Second, E: "x", P: "lru"}},
		{name: "duration from integral float", values: map[string]*pluginv1.OptionValue{"d": fv(5e8)},
			want: decodeOpts{S: "s", I: 1, I64: 2, F: 1, D: 500 * time.Millisecond, E: "x", P: "lru"}},
		{name: "non-integral float for int", values: map[string]*pluginv1.OptionValue{"i": fv(1.5)},
			wantErr: "i: expected an integer, got 1.5"},
		{name: "float beyond int64", values: map[string]*pluginv1.OptionValue{"i64": fv(1e19)},
			wantErr: "i64: expected an integer, got 1e+19"},
		{name: "NaN for int", values: map[string]*pluginv1.OptionValue{"i": fv(math.NaN())},
			wantErr: "i: expected an integer, got NaN"},
		{name: "non-integral float for duration", values: map[string]*pluginv1.OptionValue{"d": fv(0.5)},
			wantErr: "d: expected a duration, got 0.5"},
		{name: "string for duration", values: map[string]*pluginv1.OptionValue{"d": sv("1s")},
			wantErr: `d: expected a duration, got "1s"`},
		{name: "int for string", values: map[string]*pluginv1.OptionValue{"s": iv(3)},
			wantErr: "s: expected a string, got 3"},
		{name: "string for bool", values: map[string]*pluginv1.OptionValue{"b": sv("yes")},
			wantErr: `b: expected a boolean, got "yes"`},
		{name: "bool for float", values: map[string]*pluginv1.OptionValue{"f": bv(true)},
			wantErr: "f: expected a number, got true"},
		{name: "nil value", values: map[string]*pluginv1.OptionValue{"i": nil},
			wantErr: "i: expected an integer, got nothing"},
		{name: "unknown option", values: map[string]*pluginv1.OptionValue{"nope": iv(1)},
			wantErr: "nope: unknown option"},
		{name: "all problems, sorted by name",
			values:  map[string]*pluginv1.OptionValue{"zz": iv(1), "s": iv(1), "aa": iv(1)},
			wantErr: "aa: unknown option\ns: expected a string, got 1\nzz: unknown option"},
		{name: "below min", values: map[string]*pluginv1.OptionValue{"i": iv(0)},
			wantErr: "i: must be >= 1, got 0"},
		{name: "above max", values: map[string]*pluginv1.OptionValue{"i": iv(101)},
			wantErr: "i: must be <= 100, got 101"},
		{name: "float below min", values: map[string]*pluginv1.OptionValue{"f": fv(0.25)},
			wantErr: "f: must be >= 0.5, got 0.25"},
		{name: "several bounds", values: map[string]*pluginv1.OptionValue{"i": iv(0), "f": fv(0)},
			wantErr: "i: must be >= 1, got 0\nf: must be >= 0.5, got 0"},
		{name: "enum", values: map[string]*pluginv1.OptionValue{"e": sv("z")},
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
	if _, err := option.Decode(defaults, map[string]*pluginv1.OptionValue{"s": sv("changed")}); err != nil {
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
				_, err := option.Decode(ptrValidated{N: 1}, map[string]*pluginv1.OptionValue{"n": iv(0)})
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
				_, err := option.Decode(valValidated{E: "x"}, map[string]*pluginv1.OptionValue{"a": iv(-1), "b": iv(-2)})
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
				_, err := option.Decode(valValidated{E: "x"}, map[string]*pluginv1.OptionValue{"e": sv("bad")})
				return err
			},
			want: []*option.FieldError{{Option: "e", Message: `e cannot be "bad", pick x or y`}},
		},
		{
			name: "bounds still checked when validate passes",
			run: func() error {
				_, err := option.Decode(valValidated{E: "x"}, map[string]*pluginv1.OptionValue{"e": sv("z")})
				return err
			},
			want: []*option.FieldError{{Option: "e", Message: `must be one of x, y, got "z"`}},
		},
		{
			name: "valid",
			run: func() error {
				_, err := option.Decode(ptrValidated{N: 1}, map[string]*pluginv1.OptionValue{"n": iv(2)})
				return err
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

func TestValueInterfaceRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   any
		want any // what Interface gives back
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
			v := option.Value(tc.in)
			if (v == nil) != (tc.want == nil) {
				t.Fatalf("Value(%#v) = %v, want nil: %v", tc.in, v, tc.want == nil)
			}
			if d := cmp.Diff(tc.want, option.Interface(v)); d != "" {
				t.Errorf("Interface(Value(%#v)) (-want +got):\n%s", tc.in, d)
			}
		})
	}
}

// A value decoded from Interface's output gives the original back.
func TestInterfaceDecodes(t *testing.T) {
	t.Parallel()
	want := decodeOpts{S: "x", I: 9, I64: -3, F: 2.5, B: true, D: time.Minute, E: "y", P: "fifo"}
	specs, err := option.Specs(want)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]*pluginv1.OptionValue{}
	for _, sp := range specs {
		values[sp.GetName()] = option.Value(option.Interface(sp.GetDefault()))
	}
	got, err := option.Decode(decodeDefaults, values)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}
