package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/ui"
	"github.com/lmbench/lmbench/core/config"
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
	setup := s.setupForm(r, missing)
	// Log lines (a plugin starting, say) would tear the form: hold them
	// until it is gone.
	var held bytes.Buffer
	prev := s.logOut.Swap(&held)
	out, err := runSetup(ctx, s.stdin, s.stdout, setup)
	s.logOut.Swap(prev)
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
	if out.Workload != "" && config.ReadChoice(r.vals).Plugin == "" {
		answers[config.KeyWorkload] = out.Workload
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

// setupForm is the guided setup's form: what is missing, the general
// options (the workload is chosen from the discovered plugins, the log is
// already running) and each workload's options, pre-filled.
func (s *session) setupForm(r *resolved, missing []string) ui.Setup {
	var general []*config.Option
	for _, o := range r.reg.Owned("") {
		switch o.Key {
		case config.KeyWorkload, config.KeyWorkloadPlugin: // chosen from the discovered plugins
		case config.KeyLogLevel, config.KeyLogFormat: // the log is already running
		default:
			if o.Group != config.SimGroup { // the built-in engine's: flags, variables and files only
				general = append(general, o)
			}
		}
	}
	setup := ui.Setup{
		Missing:            missing,
		General:            ui.FieldsOf(general, r.vals),
		Workloads:          pluginNames("workload"),
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
				return ui.FieldsOf(r.reg.Owned(name), r.vals), nil
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
			return ui.FieldsOf(opts, v), nil
		},
	}
	if r.wl != nil {
		setup.Workload = r.wl.Name()
	}
	if r.cli.exportConfig != "" {
		setup.ExportPath = r.cli.exportConfig
	}
	return setup
}
