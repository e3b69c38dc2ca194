package config

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// EnvPrefix starts every environment variable that sets an option.
const EnvPrefix = "LMBENCH_"

// Option is one setting: lmbench's own or a plugin's.
type Option struct {
	Key   string              // config key, snake_case: "ldqa_document_length"
	Flag  string              // flag name without dashes: "ldqa-document-length"
	Short string              // one-letter flag shorthand, if any
	Env   string              // environment variable: "LMBENCH_LDQA_DOCUMENT_LENGTH"
	Type  protocol.OptionType // value type; enum values are strings from Enum
	Enum  []string
	// Default is the typed default (string, int64, float64, bool or
	// time.Duration); nil means the option is unset until a layer sets it.
	Default  any
	Help     string
	Label    string // short human label for forms
	Group    string // form group
	Advanced bool
	Min, Max *float64
	// Owner is the plugin that declared the option ("" for lmbench's own).
	Owner string
	// Name is the option's name inside its plugin (without the prefix).
	Name string
	// Aliases are other config-file keys accepted for this option (the
	// original wrote "export_json" for "json").
	Aliases []string
	// Hidden leaves the flag out of help, completion and the guided
	// setup (lmbench sweep's options on lmbench run's flag set).
	Hidden bool
}

// Registry is the set of known options.
type Registry struct {
	opts     []*Option
	byKey    map[string]*Option // keys and aliases
	byFlag   map[string]*Option
	byEnv    map[string]*Option
	prefixes map[string]string // plugin flag prefix → plugin name
	// tolerated are file keys that are not options but load when they
	// hold the given value (nil = any); see Tolerate.
	tolerated map[string]any
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byKey: map[string]*Option{}, byFlag: map[string]*Option{}, byEnv: map[string]*Option{}, prefixes: map[string]string{}}
}

// Add registers o. Flag and Env are derived from Key when empty. A key,
// flag or env name registered twice is an error.
func (r *Registry) Add(o Option) (*Option, error) {
	if o.Key == "" {
		return nil, fmt.Errorf("option with an empty key")
	}
	if o.Flag == "" {
		o.Flag = strings.ReplaceAll(o.Key, "_", "-")
	}
	if o.Env == "" {
		o.Env = EnvPrefix + strings.ToUpper(o.Key)
	}
	if o.Type == protocol.OptionUnspecified {
		o.Type = protocol.OptionString
	}
	if o.Default != nil {
		d, err := coerce(&o, o.Default)
		if err != nil {
			return nil, fmt.Errorf("option %s: default: %w", o.Key, err)
		}
		o.Default = d
	}
	for _, k := range append([]string{o.Key}, o.Aliases...) {
		if prev, ok := r.byKey[k]; ok {
			return nil, fmt.Errorf("config key %q is declared by both %s and %s", k, ownerName(prev), ownerName(&o))
		}
	}
	if prev, ok := r.byFlag[o.Flag]; ok {
		return nil, fmt.Errorf("flag --%s is declared by both %s and %s", o.Flag, ownerName(prev), ownerName(&o))
	}
	p := &o
	r.opts = append(r.opts, p)
	for _, k := range append([]string{o.Key}, o.Aliases...) {
		r.byKey[k] = p
	}
	r.byFlag[o.Flag] = p
	r.byEnv[o.Env] = p
	return p, nil
}

func ownerName(o *Option) string {
	if o.Owner == "" {
		return "lmbench"
	}
	return "plugin " + o.Owner
}

// AddPlugin registers a plugin's options under its prefix: option
// "document-length" of prefix "ldqa" becomes key ldqa_document_length,
// flag --ldqa-document-length, env LMBENCH_LDQA_DOCUMENT_LENGTH. Two
// plugins claiming one prefix is an error naming both.
func (r *Registry) AddPlugin(name, prefix string, specs []protocol.OptionSpec) ([]*Option, error) {
	if prefix == "" {
		if len(specs) > 0 {
			return nil, fmt.Errorf("plugin %s declares options but no flag prefix", name)
		}
		return nil, nil
	}
	if other, ok := r.prefixes[prefix]; ok {
		return nil, fmt.Errorf("plugins %s and %s both claim the flag prefix --%s-", other, name, prefix)
	}
	r.prefixes[prefix] = name
	var out []*Option
	for _, sp := range specs {
		key := strings.ReplaceAll(prefix+"_"+sp.Name, "-", "_")
		o, err := r.Add(Option{
			Key: key, Flag: prefix + "-" + sp.Name, Type: sp.Type, Enum: sp.Enum,
			Default: specValue(sp.Type, sp.Default), Help: sp.Help, Label: sp.Label, Group: sp.Group, Advanced: sp.Advanced,
			Min: optFloat(sp.Min), Max: optFloat(sp.Max), Owner: name, Name: sp.Name,
		})
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

func optFloat(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// specValue is a spec's default as the registry types it (a duration's
// nanoseconds become a time.Duration).
func specValue(t protocol.OptionType, v any) any {
	if n, ok := v.(int64); ok && t == protocol.OptionDuration {
		return time.Duration(n)
	}
	return v
}

// LookupFlag finds an option by flag name (without dashes).
func (r *Registry) LookupFlag(flag string) (*Option, bool) {
	o, ok := r.byFlag[flag]
	return o, ok
}

// Owned returns the options of one plugin ("" = lmbench's own), in order.
func (r *Registry) Owned(owner string) []*Option {
	var out []*Option
	for _, o := range r.opts {
		if o.Owner == owner {
			out = append(out, o)
		}
	}
	return out
}

// Expected describes the values o accepts, for error messages.
func (o *Option) Expected() string {
	switch o.Type {
	case protocol.OptionInt:
		return "an integer"
	case protocol.OptionFloat:
		return "a number"
	case protocol.OptionBool:
		return "true or false"
	case protocol.OptionDuration:
		return "a duration such as 30s or 1m30s"
	case protocol.OptionEnum:
		return "one of " + strings.Join(o.Enum, ", ")
	}
	return "a string"
}

// Parse converts text (from a flag, the environment or a form) to o's type.
func (o *Option) Parse(s string) (any, error) { return coerce(o, s) }

// coerce converts a value from any layer (JSON numbers are float64, YAML
// and TOML integers int or int64, env and flags strings) to o's type:
// string, int64, float64, bool or time.Duration.
func coerce(o *Option, v any) (any, error) {
	bad := func() error { return fmt.Errorf("expected %s, got %s", o.Expected(), show(v)) }
	switch o.Type {
	case protocol.OptionInt:
		switch x := v.(type) {
		case int:
			return int64(x), nil
		case int64:
			return x, nil
		case float64:
			if x != math.Trunc(x) || x < math.MinInt64 || x >= math.MaxInt64 {
				return nil, bad()
			}
			return int64(x), nil
		case string:
			n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
			if err != nil {
				return nil, bad()
			}
			return n, nil
		}
	case protocol.OptionFloat:
		switch x := v.(type) {
		case int:
			return float64(x), nil
		case int64:
			return float64(x), nil
		case float64:
			return x, nil
		case string:
			f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, bad()
			}
			return f, nil
		}
	case protocol.OptionBool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			b, err := strconv.ParseBool(strings.TrimSpace(x))
			if err != nil {
				return nil, bad()
			}
			return b, nil
		}
	case protocol.OptionDuration:
		switch x := v.(type) {
		case time.Duration:
			return x, nil
		case string:
			d, err := time.ParseDuration(strings.TrimSpace(x))
			if err != nil {
				return nil, bad()
			}
			return d, nil
		case int, int64, float64: // seconds, as in a file
			f, _ := coerce(&Option{Type: protocol.OptionFloat}, x)
			return time.Duration(f.(float64) * float64(time.Second)), nil
		}
	default: // STRING, ENUM
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case int, int64, float64, bool: // a YAML file may leave a name unquoted
			s = fmt.Sprint(x)
		default:
			return nil, bad()
		}
		if len(o.Enum) > 0 && !slices.Contains(o.Enum, s) {
			return nil, bad()
		}
		return s, nil
	}
	return nil, bad()
}

func show(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case nil:
		return "nothing"
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []any:
		return "a list " + showJSON(x)
	}
	return fmt.Sprint(v)
}

// showJSON renders a list from a file the way JSON writes it.
func showJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Format renders a typed value as text (for forms and flag defaults).
func Format(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case time.Duration:
		return x.String()
	}
	return fmt.Sprint(v)
}

// OptionValue converts a typed value to the protocol's form for a
// plugin: string, int64 (a duration in nanoseconds), float64 or bool.
func OptionValue(v any) any {
	switch x := v.(type) {
	case string, bool, int64, float64:
		return x
	case time.Duration:
		return int64(x)
	}
	return nil
}

// Suggest returns the known key closest to key (for "did you mean"), or "".
func (r *Registry) Suggest(key string) string {
	keys := make([]string, 0, len(r.byKey))
	for k := range r.byKey {
		keys = append(keys, k)
	}
	return Closest(key, keys)
}

// Closest returns the candidate nearest to word (at most 3 edits away;
// ties go to the alphabetically first), or "".
func Closest(word string, candidates []string) string {
	best, bestD := "", 4
	for _, c := range candidates {
		if d := distance(word, c); d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
