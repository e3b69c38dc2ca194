// Package option turns a plugin's tagged options struct into the option
// schema the host builds flags, config keys, env names and forms from, and
// decodes the host's values back into that struct.
//
// Declare options as a struct whose field values are the defaults:
//
//	type Options struct {
//		DocumentLength int    `opt:"document-length" help:"Token length per document." min:"1"`
//		ShufflePolicy  string `opt:"shuffle-policy" enum:"random,tile" help:"Request ordering."`
//	}
//
// Supported field types: string, bool, int, int64, float64, time.Duration.
// Tags: opt (kebab-case name, required), help, label, min, max, enum
// (comma-separated; makes a string an ENUM), group, advanced ("true").
// Decode checks what the schema says first (each value's type, enum
// membership, min and max), then calls the struct's `Validate() error`
// method if it has one, and reports every problem together. Validate sees
// the decoded values (a value of the wrong type leaves the default); where
// it reports an option that already broke a bound, its message replaces
// the generic one, so each option is named once, in the plugin's words.
// Return *FieldError (or several joined with errors.Join) to point at one
// option.
package option

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// FieldError is an invalid value for one option. Option is the option's
// kebab-case name without prefix ("" when no single option is at fault).
type FieldError = protocol.FieldError

// Errorf builds a *FieldError for option name.
func Errorf(name, format string, args ...any) *FieldError {
	return &FieldError{Option: name, Message: fmt.Sprintf(format, args...)}
}

// FieldErrors flattens err (possibly joined) into field errors; an error
// that is not a *FieldError becomes one without an option.
func FieldErrors(err error) []*FieldError {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*FieldError
		for _, e := range j.Unwrap() {
			out = append(out, FieldErrors(e)...)
		}
		return out
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return []*FieldError{fe}
	}
	return []*FieldError{{Message: err.Error()}}
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

var durationType = reflect.TypeOf(time.Duration(0))

type field struct {
	index int
	spec  *protocol.OptionSpec
}

func fields(t reflect.Type) ([]field, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("options must be a struct, got %s", t)
	}
	var out []field
	seen := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, ok := sf.Tag.Lookup("opt")
		if !ok || !sf.IsExported() {
			continue
		}
		if !nameRE.MatchString(name) {
			return nil, fmt.Errorf("field %s: opt name %q must be kebab-case", sf.Name, name)
		}
		if seen[name] {
			return nil, fmt.Errorf("field %s: duplicate opt name %q", sf.Name, name)
		}
		seen[name] = true
		spec := &protocol.OptionSpec{
			Name:     name,
			Help:     sf.Tag.Get("help"),
			Label:    sf.Tag.Get("label"),
			Group:    sf.Tag.Get("group"),
			Advanced: sf.Tag.Get("advanced") == "true",
		}
		switch {
		case sf.Type == durationType:
			spec.Type = protocol.OptionDuration
		case sf.Type.Kind() == reflect.String:
			spec.Type = protocol.OptionString
			if e := sf.Tag.Get("enum"); e != "" {
				spec.Type = protocol.OptionEnum
				spec.Enum = strings.Split(e, ",")
			}
		case sf.Type.Kind() == reflect.Bool:
			spec.Type = protocol.OptionBool
		case sf.Type.Kind() == reflect.Int || sf.Type.Kind() == reflect.Int64:
			spec.Type = protocol.OptionInt
		case sf.Type.Kind() == reflect.Float64:
			spec.Type = protocol.OptionFloat
		default:
			return nil, fmt.Errorf("field %s: unsupported option type %s", sf.Name, sf.Type)
		}
		// A slice, not a map: with both tags bad the error must not vary between runs.
		for _, b := range []struct {
			tag string
			dst **float64
		}{{"min", &spec.Min}, {"max", &spec.Max}} {
			if s := sf.Tag.Get(b.tag); s != "" {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil {
					return nil, fmt.Errorf("field %s: %s tag %q is not a number", sf.Name, b.tag, s)
				}
				*b.dst = &v
			}
		}
		out = append(out, field{index: i, spec: spec})
	}
	return out, nil
}

// Specs returns the option schema of defaults (a struct value), with each
// field's value as its default.
func Specs(defaults any) ([]protocol.OptionSpec, error) {
	v := reflect.ValueOf(defaults)
	if !v.IsValid() {
		return nil, errors.New("options must be a struct, got nil")
	}
	fs, err := fields(v.Type())
	if err != nil {
		return nil, err
	}
	out := make([]protocol.OptionSpec, len(fs))
	for i, f := range fs {
		f.spec.Default = Value(v.Field(f.index).Interface())
		if f.spec.Type == protocol.OptionEnum {
			if d, _ := f.spec.Default.(string); !slices.Contains(f.spec.Enum, d) {
				return nil, fmt.Errorf("option %s: default %q is not one of %v", f.spec.Name, d, f.spec.Enum)
			}
		}
		out[i] = *f.spec
	}
	return out, nil
}

// Value converts a Go value to an option value as it travels: string,
// int64 (ints and durations, in nanoseconds), float64 or bool; nil for a
// type no option can hold.
func Value(x any) any {
	switch v := x.(type) {
	case string, bool, int64, float64:
		return v
	case int:
		return int64(v)
	case time.Duration:
		return int64(v)
	}
	// Named types (type Policy string) are accepted as options by kind, so
	// their values must convert too, or their defaults would be lost.
	if x == nil {
		return nil
	}
	switch rv := reflect.ValueOf(x); rv.Kind() {
	case reflect.String:
		return rv.String()
	case reflect.Bool:
		return rv.Bool()
	case reflect.Int, reflect.Int64:
		return rv.Int()
	case reflect.Float64:
		return rv.Float()
	}
	return nil
}

// Values converts a map of Go values (names without prefix) with Value.
func Values(m map[string]any) (protocol.Values, error) {
	out := make(protocol.Values, len(m))
	for k, x := range m {
		v := Value(x)
		if v == nil {
			return nil, fmt.Errorf("option %s: unsupported Go type %T", k, x)
		}
		out[k] = v
	}
	return out, nil
}

// Decode fills a copy of defaults (a struct value of type O) from values.
// It checks, in this order, unknown names and each value's type, enum
// membership and bounds, then calls Validate if O has it; every problem is
// returned together (joined *FieldErrors). An option that broke a bound
// and that Validate also reports is reported once, in Validate's words.
func Decode[O any](defaults O, values protocol.Values) (O, error) {
	out := defaults
	v := reflect.ValueOf(&out).Elem()
	fs, err := fields(v.Type())
	if err != nil {
		return out, err
	}
	byName := map[string]field{}
	for _, f := range fs {
		byName[f.spec.Name] = f
	}
	var schema []*FieldError
	mistyped := map[string]bool{}
	// Sorted, so several problems are always reported in the same order.
	for _, name := range slices.Sorted(maps.Keys(values)) {
		f, ok := byName[name]
		if !ok {
			schema = append(schema, Errorf(name, "unknown option"))
			continue
		}
		if err := set(v.Field(f.index), f.spec, values[name]); err != nil {
			schema = append(schema, err)
			mistyped[name] = true
		}
	}
	for _, f := range fs {
		if mistyped[f.spec.Name] {
			continue
		}
		if err := checkBounds(v.Field(f.index), f.spec); err != nil {
			schema = append(schema, err)
		}
	}
	own := FieldErrors(validate(&out))
	mine := map[string]bool{}
	for _, fe := range own {
		mine[fe.Option] = fe.Option != ""
	}
	var errs []error
	for _, fe := range schema {
		if !mine[fe.Option] || mistyped[fe.Option] {
			errs = append(errs, fe)
		}
	}
	for _, fe := range own {
		if !mistyped[fe.Option] || fe.Option == "" {
			errs = append(errs, fe)
		}
	}
	return out, errors.Join(errs...)
}

// validate calls o's Validate method, if it has one (on the value or the
// pointer). A panic in it is reported as an error, not a crash: it may see
// values outside the bounds.
func validate[O any](o *O) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the options' Validate method panicked: %v", r)
		}
	}()
	if val, ok := any(o).(interface{ Validate() error }); ok {
		return val.Validate()
	}
	if val, ok := any(*o).(interface{ Validate() error }); ok {
		return val.Validate()
	}
	return nil
}

func set(dst reflect.Value, spec *protocol.OptionSpec, val any) *FieldError {
	bad := func() *FieldError {
		return Errorf(spec.Name, "expected %s, got %s", typeName(spec.Type), describe(val))
	}
	switch spec.Type {
	case protocol.OptionString, protocol.OptionEnum:
		s, ok := val.(string)
		if !ok {
			return bad()
		}
		dst.SetString(s) // enum membership is checked with the bounds
	case protocol.OptionBool:
		b, ok := val.(bool)
		if !ok {
			return bad()
		}
		dst.SetBool(b)
	case protocol.OptionInt, protocol.OptionDuration:
		switch k := val.(type) {
		case int64:
			dst.SetInt(k)
		case float64:
			// Out of int64's range the conversion is undefined, not an error.
			if k != math.Trunc(k) || k < math.MinInt64 || k >= math.MaxInt64 {
				return bad()
			}
			dst.SetInt(int64(k))
		default:
			return bad()
		}
	case protocol.OptionFloat:
		switch k := val.(type) {
		case float64:
			dst.SetFloat(k)
		case int64:
			dst.SetFloat(float64(k))
		default:
			return bad()
		}
	}
	return nil
}

func checkBounds(v reflect.Value, spec *protocol.OptionSpec) *FieldError {
	if spec.Type == protocol.OptionEnum && !slices.Contains(spec.Enum, v.String()) {
		return Errorf(spec.Name, "must be one of %s, got %q", strings.Join(spec.Enum, ", "), v.String())
	}
	var x float64
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		x = float64(v.Int())
	case reflect.Float64:
		x = v.Float()
	default:
		return nil
	}
	if spec.Min != nil && x < *spec.Min {
		return Errorf(spec.Name, "must be >= %s, got %s", num(*spec.Min), num(x))
	}
	if spec.Max != nil && x > *spec.Max {
		return Errorf(spec.Name, "must be <= %s, got %s", num(*spec.Max), num(x))
	}
	return nil
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func typeName(t protocol.OptionType) string {
	switch t {
	case protocol.OptionInt:
		return "an integer"
	case protocol.OptionFloat:
		return "a number"
	case protocol.OptionBool:
		return "a boolean"
	case protocol.OptionDuration:
		return "a duration"
	}
	return "a string"
}

func describe(v any) string {
	switch k := v.(type) {
	case string:
		return strconv.Quote(k)
	case int64:
		return strconv.FormatInt(k, 10)
	case float64:
		return num(k)
	case bool:
		return strconv.FormatBool(k)
	}
	return "nothing"
}

// Errors flattens err into field errors, as Configure reports them.
func Errors(err error) []protocol.FieldError {
	var out []protocol.FieldError
	for _, fe := range FieldErrors(err) {
		out = append(out, *fe)
	}
	return out
}
