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
// If the struct has a `Validate() error` method it is called after
// decoding; return *FieldError (or several joined with errors.Join) to point
// at one option.
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

	pluginv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/plugin/v1"
)

// FieldError is an invalid value for one option. Option is the option's
// kebab-case name without prefix ("" when no single option is at fault).
type FieldError struct {
	Option  string
	Message string
}

func (e *FieldError) Error() string {
	if e.Option == "" {
		return e.Message
	}
	return e.Option + ": " + e.Message
}

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
	spec  *pluginv1.OptionSpec
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
		spec := &pluginv1.OptionSpec{
			Name:     name,
			Help:     sf.Tag.Get("help"),
			Label:    sf.Tag.Get("label"),
			Group:    sf.Tag.Get("group"),
			Advanced: sf.Tag.Get("advanced") == "true",
		}
		switch {
		case sf.Type == durationType:
			spec.Type = pluginv1.OptionType_OPTION_TYPE_DURATION
		case sf.Type.Kind() == reflect.String:
			spec.Type = pluginv1.OptionType_OPTION_TYPE_STRING
			if e := sf.Tag.Get("enum"); e != "" {
				spec.Type = pluginv1.OptionType_OPTION_TYPE_ENUM
				spec.EnumValues = strings.Split(e, ",")
			}
		case sf.Type.Kind() == reflect.Bool:
			spec.Type = pluginv1.OptionType_OPTION_TYPE_BOOL
		case sf.Type.Kind() == reflect.Int || sf.Type.Kind() == reflect.Int64:
			spec.Type = pluginv1.OptionType_OPTION_TYPE_INT
		case sf.Type.Kind() == reflect.Float64:
			spec.Type = pluginv1.OptionType_OPTION_TYPE_FLOAT
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
func Specs(defaults any) ([]*pluginv1.OptionSpec, error) {
	v := reflect.ValueOf(defaults)
	if !v.IsValid() {
		return nil, errors.New("options must be a struct, got nil")
	}
	fs, err := fields(v.Type())
	if err != nil {
		return nil, err
	}
	out := make([]*pluginv1.OptionSpec, len(fs))
	for i, f := range fs {
		f.spec.Default = Value(v.Field(f.index).Interface())
		if f.spec.Type == pluginv1.OptionType_OPTION_TYPE_ENUM && !slices.Contains(f.spec.EnumValues, f.spec.Default.GetStringValue()) {
			return nil, fmt.Errorf("option %s: default %q is not one of %v", f.spec.Name, f.spec.Default.GetStringValue(), f.spec.EnumValues)
		}
		out[i] = f.spec
	}
	return out, nil
}

// Value converts a Go value to an OptionValue (nil for unsupported types).
func Value(x any) *pluginv1.OptionValue {
	switch v := x.(type) {
	case string:
		return &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_StringValue{StringValue: v}}
	case bool:
		return &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_BoolValue{BoolValue: v}}
	case int:
		return &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_IntValue{IntValue: int64(v)}}
	case int64:
		return &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_IntValue{IntValue: v}}
	case time.Duration:
		return &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_IntValue{IntValue: int64(v)}}
	case float64:
		return &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_FloatValue{FloatValue: v}}
	}
	// Named types (type Policy string) are accepted as options by kind, so
	// their values must convert too, or their defaults would be lost.
	if x == nil {
		return nil
	}
	switch rv := reflect.ValueOf(x); rv.Kind() {
	case reflect.String:
		return Value(rv.String())
	case reflect.Bool:
		return Value(rv.Bool())
	case reflect.Int, reflect.Int64:
		return Value(rv.Int())
	case reflect.Float64:
		return Value(rv.Float())
	}
	return nil
}

// Decode fills a copy of defaults (a struct value of type O) from values,
// checks types, enums and bounds, then calls Validate if O has it.
// Unknown option names are errors. All problems are returned together.
func Decode[O any](defaults O, values map[string]*pluginv1.OptionValue) (O, error) {
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
	var errs []error
	// Sorted, so several problems are always reported in the same order.
	for _, name := range slices.Sorted(maps.Keys(values)) {
		f, ok := byName[name]
		if !ok {
			errs = append(errs, Errorf(name, "unknown option"))
			continue
		}
		if err := set(v.Field(f.index), f.spec, values[name]); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return out, errors.Join(errs...)
	}
	// The plugin's own messages come first: they are the ones users know.
	if val, ok := any(&out).(interface{ Validate() error }); ok {
		if err := val.Validate(); err != nil {
			return out, err
		}
	} else if val, ok := any(out).(interface{ Validate() error }); ok {
		if err := val.Validate(); err != nil {
			return out, err
		}
	}
	for _, f := range fs {
		if err := checkBounds(v.Field(f.index), f.spec); err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

func set(dst reflect.Value, spec *pluginv1.OptionSpec, val *pluginv1.OptionValue) error {
	bad := func() error {
		return Errorf(spec.Name, "expected %s, got %s", typeName(spec.Type), describe(val))
	}
	switch spec.Type {
	case pluginv1.OptionType_OPTION_TYPE_STRING, pluginv1.OptionType_OPTION_TYPE_ENUM:
		s, ok := val.GetKind().(*pluginv1.OptionValue_StringValue)
		if !ok {
			return bad()
		}
		dst.SetString(s.StringValue) // enum membership is checked after Validate

	case pluginv1.OptionType_OPTION_TYPE_BOOL:
		b, ok := val.GetKind().(*pluginv1.OptionValue_BoolValue)
		if !ok {
			return bad()
		}
		dst.SetBool(b.BoolValue)
	case pluginv1.OptionType_OPTION_TYPE_INT, pluginv1.OptionType_OPTION_TYPE_DURATION:
		switch k := val.GetKind().(type) {
		case *pluginv1.OptionValue_IntValue:
			dst.SetInt(k.IntValue)
		case *pluginv1.OptionValue_FloatValue:
			// Out of int64's range the conversion is undefined, not an error.
			if k.FloatValue != math.Trunc(k.FloatValue) || k.FloatValue < math.MinInt64 || k.FloatValue >= math.MaxInt64 {
				return bad()
			}
			dst.SetInt(int64(k.FloatValue))
		default:
			return bad()
		}
	case pluginv1.OptionType_OPTION_TYPE_FLOAT:
		switch k := val.GetKind().(type) {
		case *pluginv1.OptionValue_FloatValue:
			dst.SetFloat(k.FloatValue)
		case *pluginv1.OptionValue_IntValue:
			dst.SetFloat(float64(k.IntValue))
		default:
			return bad()
		}
	}
	return nil
}

func checkBounds(v reflect.Value, spec *pluginv1.OptionSpec) error {
	if spec.Type == pluginv1.OptionType_OPTION_TYPE_ENUM && !slices.Contains(spec.EnumValues, v.String()) {
		return Errorf(spec.Name, "must be one of %s, got %q", strings.Join(spec.EnumValues, ", "), v.String())
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

func typeName(t pluginv1.OptionType) string {
	switch t {
	case pluginv1.OptionType_OPTION_TYPE_INT:
		return "an integer"
	case pluginv1.OptionType_OPTION_TYPE_FLOAT:
		return "a number"
	case pluginv1.OptionType_OPTION_TYPE_BOOL:
		return "a boolean"
	case pluginv1.OptionType_OPTION_TYPE_DURATION:
		return "a duration"
	}
	return "a string"
}

func describe(v *pluginv1.OptionValue) string {
	switch k := v.GetKind().(type) {
	case *pluginv1.OptionValue_StringValue:
		return strconv.Quote(k.StringValue)
	case *pluginv1.OptionValue_IntValue:
		return strconv.FormatInt(k.IntValue, 10)
	case *pluginv1.OptionValue_FloatValue:
		return num(k.FloatValue)
	case *pluginv1.OptionValue_BoolValue:
		return strconv.FormatBool(k.BoolValue)
	}
	return "nothing"
}

// Interface returns the Go value held by v (string, int64, float64, bool) or nil.
func Interface(v *pluginv1.OptionValue) any {
	switch k := v.GetKind().(type) {
	case *pluginv1.OptionValue_StringValue:
		return k.StringValue
	case *pluginv1.OptionValue_IntValue:
		return k.IntValue
	case *pluginv1.OptionValue_FloatValue:
		return k.FloatValue
	case *pluginv1.OptionValue_BoolValue:
		return k.BoolValue
	}
	return nil
}

// ProtoErrors flattens err into the wire form of field errors.
func ProtoErrors(err error) []*pluginv1.FieldError {
	var out []*pluginv1.FieldError
	for _, fe := range FieldErrors(err) {
		out = append(out, &pluginv1.FieldError{Option: fe.Option, Message: fe.Message})
	}
	return out
}
