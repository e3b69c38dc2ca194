package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/ui"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/plugin"
)

// runSetup and interactive are swapped by tests, which have no terminal.
var (
	runSetup    = ui.RunSetup
	interactive = func(s *session) bool { return isTerminal(s.stdin) && isTerminal(s.stdout) }
)

// defaultExportPath is the file name the guided setup offers for export.
const defaultExportPath = "bench_config.json"

// guidedSetup asks for what is missing and offers the other settings
// (the workload's built from its option schema), then resolves the
// configuration again with the answers as the top layer. cancelled is
// true when the person cancelled the form.
func (s *session) guidedSetup(ctx context.Context, args []string, r *resolved, missing []string) (_ *resolved, cancelled bool, _ error) {
	var names []string
	for _, c := range plugin.Discover("workload", plugin.SearchDirs()) {
		if c.Refused == "" {
			names = append(names, c.Name)
		}
	}
	var general []*config.Option
	for _, o := range r.reg.Owned("") {
		switch o.Key {
		case keyWorkload, keyWorkloadPlugin: // chosen from the discovered plugins
		case keyLogLevel, keyLogFormat: // the log is already running
		default:
			general = append(general, o)
		}
	}
	setup := ui.Setup{
		Missing:            missing,
		General:            formFields(general, r.vals),
		Workloads:          names,
		ExportPath:         defaultExportPath,
		EngineServesStatus: func(u string) bool { return config.HasStatusSource("", strings.TrimSpace(u)) },
		CheckExportPath: func(path string) error {
			if _, err := config.Parser(path); err != nil {
				return err
			}
			return nil
		},
		WorkloadFields: func(name string) ([]ui.Field, error) {
			if r.wl != nil && r.wl.Name() == name {
				return formFields(r.reg.Owned(name), r.vals), nil
			}
			l, err := s.plugins.Workload(name, false, "workload")
			if err != nil {
				return nil, err
			}
			reg := config.NewRegistry()
			opts, err := reg.AddPlugin(l.Name(), l.Prefix(), l.Options())
			if err != nil {
				return nil, err
			}
			// The file and environment may already set this workload's options.
			v, err := reg.Load(config.Sources{File: r.cli.config, Partial: true})
			if err != nil {
				return nil, err
			}
			return formFields(opts, v), nil
		},
	}
	if r.wl != nil {
		setup.Workload = r.wl.Name()
	}
	if r.cli.exportConfig != "" {
		setup.ExportPath = r.cli.exportConfig
	}
	// Log lines (a plugin starting, say) would tear the form: hold them
	// until it is gone.
	var held bytes.Buffer
	prev := s.logOut.swap(&held)
	out, err := runSetup(ctx, s.stdin, s.stdout, setup)
	s.logOut.swap(prev)
	prev.Write(held.Bytes())
	if err != nil {
		return nil, false, fmt.Errorf("guided setup: %w", err)
	}
	if out.Action == ui.ActionCancel {
		return nil, true, nil
	}
	answers := maps.Clone(out.Values)
	if answers == nil {
		answers = map[string]string{}
	}
	if out.Workload != "" && r.vals.String(keyWorkloadPlugin) == "" {
		answers[keyWorkload] = out.Workload
	}
	nr, err := s.resolve(args, answers)
	if err != nil {
		return nil, false, err
	}
	if out.Action == ui.ActionExport {
		nr.cli.exportConfig = out.ExportPath
		if nr.cli.exportConfig == "" {
			nr.cli.exportConfig = defaultExportPath
		}
	}
	return nr, false, nil
}

// formFields turns options into form fields, pre-filled with their
// current values (default, file, environment or flag).
func formFields(opts []*config.Option, v *config.Values) []ui.Field {
	var out []ui.Field
	for _, o := range opts {
		f := ui.Field{
			Key: o.Key, Flag: "--" + o.Flag, Label: o.Label, Help: o.Help, Enum: o.Enum,
			Value: config.Format(v.Get(o.Key)), Group: o.Group, Advanced: o.Advanced,
			Required: o.Key == keyEngineURL,
			Validate: validator(o),
		}
		if f.Label == "" {
			f.Label = o.Flag
		}
		if f.Group == "" {
			f.Group = "Workload: " + o.Owner
			if o.Owner == "" {
				f.Group = generalGroup
			}
		}
		switch o.Type {
		case tInt:
			f.Kind = ui.KindInt
		case tFloat:
			f.Kind = ui.KindFloat
		case tBool:
			f.Kind = ui.KindBool
		case tEnum:
			f.Kind = ui.KindEnum
		default:
			f.Kind = ui.KindString
		}
		if len(o.Enum) > 0 {
			f.Kind = ui.KindEnum
		}
		out = append(out, f)
	}
	return out
}

// validator checks a form answer the way the config layers will: type,
// enum and the schema's bounds. An empty answer keeps the value below.
func validator(o *config.Option) func(string) error {
	return func(s string) error {
		if s == "" {
			return nil
		}
		switch {
		case o.Key == keyEngineURL && s == config.BuiltinEngine:
			return nil
		case o.Key == keyEngineURL || o.Key == keyLMCacheURL:
			// Checked as the run will, rather than after the form.
			return config.CheckURL(s)
		}
		x, err := o.Parse(s)
		if err != nil {
			return err
		}
		var n float64
		switch v := x.(type) {
		case int64:
			n = float64(v)
		case float64:
			n = v
		default:
			return nil
		}
		if positive(o.Key) && n <= 0 {
			// prepare rejects these after the form; say it while the
			// person can still fix the answer.
			return fmt.Errorf("must be positive, got %s", s)
		}
		if o.Min != nil && n < *o.Min {
			return fmt.Errorf("must be at least %s, got %s", strconv.FormatFloat(*o.Min, 'g', -1, 64), s)
		}
		if o.Max != nil && n > *o.Max {
			return fmt.Errorf("must be at most %s, got %s", strconv.FormatFloat(*o.Max, 'g', -1, 64), s)
		}
		return nil
	}
}

// positive tells whether an option of lmbench's own must be greater than
// zero (the original's checks of the KV cache volume and tokens per GB).
func positive(key string) bool { return key == keyKVVolume || key == keyTokensPerGB }
