package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/knadh/koanf/parsers/json"
	"github.com/knadh/koanf/parsers/toml/v2"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/providers/rawbytes"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"
)

// Layer is where a value came from, in increasing priority.
type Layer int

// The layers, lowest first.
const (
	LayerNone Layer = iota
	LayerDefault
	LayerPluginDefault
	LayerFile
	LayerEnv
	LayerFlag
	LayerForm
	LayerResolved // filled in by lmbench itself (auto-detected model, tokens per GB from LMCache)
)

// Sources are the layers above the defaults.
type Sources struct {
	File    string            // --config path; "" = none
	Environ []string          // "NAME=value" pairs; nil means os.Environ()
	Flags   *pflag.FlagSet    // flags added by Registry.RegisterFlags; changed ones count
	Answers map[string]string // guided-setup answers by key (highest priority)
	// Partial ignores file keys and LMBENCH_* variables the registry does
	// not know (yet): the first pass, before the plugins have described
	// their options.
	Partial bool
	// Elsewhere, when not nil, returns the options of the installed
	// plugins the run does not use. It is called at most once, and only
	// when a file key or LMBENCH_* variable is unknown to the registry:
	// such a key that another plugin declares is ignored (listed in
	// Values.Ignored, its value not checked) instead of being an error.
	Elsewhere func() *Elsewhere
}

// Values is a resolved configuration.
type Values struct {
	reg *Registry
	k   *koanf.Koanf
	src map[string]Layer
	// File is the config file loaded, if any.
	File string
	// UnknownEnv lists LMBENCH_* variables that set no option (only
	// collected when not Partial); the caller warns about them.
	UnknownEnv []string
	// Ignored lists the file keys and LMBENCH_* variables that set an
	// option of a plugin the run does not use (see Sources.Elsewhere),
	// file keys first, each sorted; the caller warns about them.
	Ignored []Ignored
}

// Load merges the defaults and the given sources. Every problem (unknown
// key, value of the wrong type) is reported, each naming the file key,
// variable or flag, the value given and what is expected.
func (r *Registry) Load(s Sources) (*Values, error) {
	v := &Values{reg: r, k: koanf.New("."), src: map[string]Layer{}, File: s.File}
	var errs []error
	var other *Elsewhere
	asked := false
	elsewhere := func() *Elsewhere {
		if !asked && s.Elsewhere != nil {
			other = s.Elsewhere()
		}
		asked = true
		return other
	}
	r.loadDefaults(v)
	if s.File != "" {
		m, ignored, err := r.readFile(s.File, s.Partial, elsewhere)
		v.Ignored = append(v.Ignored, ignored...)
		if err != nil {
			errs = append(errs, err)
		}
		v.merge(m, LayerFile)
	}
	environ := s.Environ
	if environ == nil {
		environ = os.Environ()
	}
	errs = append(errs, r.loadEnv(v, environ, s.Partial, elsewhere)...)
	if s.Flags != nil {
		if err := r.loadFlags(v, s.Flags); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, r.loadAnswers(v, s.Answers, s.Partial)...)
	return v, errors.Join(errs...)
}

// loadDefaults merges lmbench's defaults, then the plugins'.
func (r *Registry) loadDefaults(v *Values) {
	host, plugins := map[string]any{}, map[string]any{}
	for _, o := range r.opts {
		if o.Default == nil {
			continue
		}
		if o.Owner == "" {
			host[o.Key] = o.Default
		} else {
			plugins[o.Key] = o.Default
		}
	}
	v.merge(host, LayerDefault)
	v.merge(plugins, LayerPluginDefault)
}

// loadEnv merges the LMBENCH_* variables of environ, listing those of no
// option (unless partial) in v.UnknownEnv or, when another plugin
// declares them, in v.Ignored; it returns the values that do not parse.
func (r *Registry) loadEnv(v *Values, environ []string, partial bool, elsewhere func() *Elsewhere) []error {
	var errs, envErrs []error
	var envIgnored []Ignored
	ek := koanf.New(".")
	err := ek.Load(env.Provider("", env.Opt{
		Prefix:      EnvPrefix,
		EnvironFunc: func() []string { return environ },
		TransformFunc: func(name, val string) (string, any) {
			o, ok := r.byEnv[name]
			if !ok {
				if !partial && !nonOptionEnv[name] {
					if owner, ok := elsewhere().Env(name); ok {
						envIgnored = append(envIgnored, Ignored{Name: name, Env: true, Owner: owner})
					} else {
						v.UnknownEnv = append(v.UnknownEnv, name)
					}
				}
				return "", nil
			}
			x, err := o.Parse(val)
			if err != nil {
				envErrs = append(envErrs, fmt.Errorf("%s: %w", name, err))
				return "", nil
			}
			return o.Key, x
		},
	}), nil)
	if err != nil {
		errs = append(errs, fmt.Errorf("reading the environment: %w", err))
	}
	slices.Sort(v.UnknownEnv)
	slices.SortFunc(envIgnored, func(a, b Ignored) int { return strings.Compare(a.Name, b.Name) })
	v.Ignored = append(v.Ignored, envIgnored...)
	v.merge(ek.All(), LayerEnv)
	return append(errs, sortErrs(envErrs)...)
}

// loadFlags merges the flags of fs the user changed.
func (r *Registry) loadFlags(v *Values, fs *pflag.FlagSet) error {
	fk := koanf.New(".")
	var err error
	// A nil koanf: flags the user did not change are dropped, so their
	// defaults never override a file or the environment.
	if e := fk.Load(posflag.ProviderWithFlag(fs, ".", nil, func(f *pflag.Flag) (string, any) {
		o, val, ok := flagOption(f)
		if !ok || r.byFlag[o.Flag] != o {
			return "", nil
		}
		return o.Key, val
	}), nil); e != nil {
		err = fmt.Errorf("reading flags: %w", e)
	}
	v.merge(fk.All(), LayerFlag)
	return err
}

// loadAnswers merges the guided setup's answers (an empty one keeps the
// lower layers' value).
func (r *Registry) loadAnswers(v *Values, answers map[string]string, partial bool) []error {
	if len(answers) == 0 {
		return nil
	}
	var errs []error
	m := map[string]any{}
	for _, key := range slices.Sorted(mapsKeys(answers)) {
		o, ok := r.byKey[key]
		if !ok {
			if !partial {
				errs = append(errs, fmt.Errorf("setting %q: unknown key", key))
			}
			continue
		}
		if strings.TrimSpace(answers[key]) == "" {
			continue // left empty: keep the lower layers' value
		}
		x, err := o.Parse(answers[key])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s (--%s): %w", o.Label, o.Flag, err))
			continue
		}
		m[o.Key] = x
	}
	v.merge(m, LayerForm)
	return errs
}

// nonOptionEnv are LMBENCH_* variables that are not options (read elsewhere).
var nonOptionEnv = map[string]bool{"LMBENCH_PLUGIN_PATH": true, "LMBENCH_BIN": true, "LMBENCH_PPROF_ADDR": true,
	"LMBENCH_CPUPROFILE": true, "LMBENCH_MEMPROFILE": true}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func sortErrs(errs []error) []error {
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errs
}

func (v *Values) merge(m map[string]any, l Layer) {
	if len(m) == 0 {
		return
	}
	// Keys are flat (no delimiter inside), so confmap loads them as-is.
	v.k.Load(confmap.Provider(m, "."), nil)
	for k := range m {
		v.src[k] = l
	}
}

// Parser returns the koanf parser for a config file, by extension.
func Parser(path string) (koanf.Parser, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json", "":
		return json.Parser(), nil
	case ".yaml", ".yml":
		return yaml.Parser(), nil
	case ".toml":
		return toml.Parser(), nil
	}
	return nil, fmt.Errorf("unknown file type %q: expected .json, .yaml, .yml or .toml", filepath.Ext(path))
}

// readFile loads a config file into typed values by canonical key, and
// lists the keys it ignored as options of plugins not in use.
func (r *Registry) readFile(path string, partial bool, elsewhere func() *Elsewhere) (map[string]any, []Ignored, error) {
	p, err := Parser(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--config %s: %w", path, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--config %s: cannot read the file (expected a readable JSON, YAML or TOML file): %w", path, err)
	}
	fk := koanf.New(".")
	if err := fk.Load(rawbytes.Provider(b), p); err != nil {
		return nil, nil, fmt.Errorf("--config %s: not a valid %s object: %v", path, strings.ToUpper(strings.TrimPrefix(filepath.Ext(path), ".")), err)
	}
	out := map[string]any{}
	var errs []error
	var ignored []Ignored
	all := fk.All()
	for _, key := range slices.Sorted(func(yield func(string) bool) {
		for k := range all {
			if !yield(k) {
				return
			}
		}
	}) {
		val := all[key]
		o, ok := r.byKey[key]
		if !ok {
			if partial {
				continue
			}
			if want, ok := r.tolerated[key]; ok {
				if want == nil || fmt.Sprint(val) == fmt.Sprint(want) {
					continue
				}
				errs = append(errs, fmt.Errorf("--config %s: key %q: only %s is supported (lmbench always behaves so), got %s", path, key, show(want), show(val)))
				continue
			}
			other := elsewhere()
			if owner, ok := other.Key(key); ok {
				ignored = append(ignored, Ignored{Name: key, Owner: owner})
				continue // another plugin's option: its value is not checked
			}
			hint := ""
			if s := r.Suggest(key); s != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", s)
			} else if s, owner := other.Suggest(key); s != "" {
				hint = fmt.Sprintf(" (did you mean %q, an option of %s %s?)", s, owner.Kind, owner.Plugin)
			} else {
				hint = " (expected one of: " + strings.Join(r.keys(), ", ") + ")"
			}
			errs = append(errs, fmt.Errorf("--config %s: unknown key %q%s", path, key, hint))
			continue
		}
		if val == nil {
			continue // null: unset, as in the original's exported files
		}
		x, err := coerce(o, val)
		if err != nil {
			errs = append(errs, fmt.Errorf("--config %s: key %q: %w", path, key, err))
			continue
		}
		if _, dup := out[o.Key]; dup {
			errs = append(errs, fmt.Errorf("--config %s: key %q: %q is set twice (%s is an alias)", path, key, o.Key, strings.Join(o.Aliases, ", ")))
			continue
		}
		out[o.Key] = x
	}
	return out, ignored, errors.Join(errs...)
}

// Tolerate makes a config-file key that is not an option load without
// error when its value is want (nil: any value). Files written by other
// versions of the original tool carry such keys.
func (r *Registry) Tolerate(key string, want any) {
	if r.tolerated == nil {
		r.tolerated = map[string]any{}
	}
	r.tolerated[key] = want
}

func (r *Registry) keys() []string {
	var ks []string
	for _, o := range r.opts {
		ks = append(ks, o.Key)
	}
	slices.Sort(ks)
	return ks
}

// Has reports whether key has a value (from any layer, defaults included).
func (v *Values) Has(key string) bool { return v.k.Exists(key) }

// UserSet reports whether key was set above the defaults: by the file,
// the environment, a flag, the form or resolution.
func (v *Values) UserSet(key string) bool { return v.src[key] >= LayerFile }

// Layer is where key's value came from (LayerNone: unset).
func (v *Values) Layer(key string) Layer { return v.src[key] }

// Get returns key's typed value, or nil.
func (v *Values) Get(key string) any { return v.k.Get(key) }

// String returns key's value as a string ("" when unset).
func (v *Values) String(key string) string { s, _ := v.k.Get(key).(string); return s }

// Int returns key's integer value (0 when unset).
func (v *Values) Int(key string) int64 { n, _ := v.k.Get(key).(int64); return n }

// Float returns key's float value (0 when unset).
func (v *Values) Float(key string) float64 { f, _ := v.k.Get(key).(float64); return f }

// Bool returns key's boolean value (false when unset).
func (v *Values) Bool(key string) bool { b, _ := v.k.Get(key).(bool); return b }

// Duration returns key's duration value (0 when unset).
func (v *Values) Duration(key string) time.Duration { d, _ := v.k.Get(key).(time.Duration); return d }

// Set records a value lmbench resolved itself (LayerResolved).
func (v *Values) Set(key string, val any) error {
	o, ok := v.reg.byKey[key]
	if !ok {
		return fmt.Errorf("unknown config key %q", key)
	}
	x, err := coerce(o, val)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	v.merge(map[string]any{o.Key: x}, LayerResolved)
	return nil
}

// Origin names where key's value came from, the way a user would find it:
// "--ldqa-document-length", "LMBENCH_SEED" or `key "seed" in run.yaml`.
func (v *Values) Origin(key string) string {
	o, ok := v.reg.byKey[key]
	if !ok {
		return key
	}
	switch v.src[o.Key] {
	case LayerFile:
		return fmt.Sprintf("key %q in %s", o.Key, v.File)
	case LayerEnv:
		return o.Env
	case LayerForm:
		return o.Label + " (--" + o.Flag + ")"
	}
	return "--" + o.Flag
}
