package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/ui"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/invocation"
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
func (s *session) guidedSetup(ctx context.Context, args []string, r *invocation.Resolved, missing []string) (_ *invocation.Resolved, cancelled bool, _ error) {
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
	if out.Workload != "" && config.ReadChoice(r.Values).Plugin == "" {
		answers[config.KeyWorkload] = out.Workload
	}
	nr, err := s.Resolve(args, answers)
	if err != nil {
		return nil, false, cliError(err)
	}
	if out.Action == ui.ActionExport {
		nr.Flags.ExportConfig = cmp.Or(out.ExportPath, defaultExportPath)
	}
	return nr, false, nil
}

// setupForm is the guided setup's form: what is missing, the general
// options (the workload is chosen from the discovered plugins, the log is
// already running) and each workload's options, pre-filled.
func (s *session) setupForm(r *invocation.Resolved, missing []string) ui.Setup {
	var general []*config.Option
	for _, o := range r.Registry.Owned("") {
		switch o.Key {
		case config.KeyWorkload, config.KeyWorkloadPlugin: // chosen from the discovered plugins
		case config.KeyLogLevel, config.KeyLogFormat: // the log is already running
		default:
			if o.Group != config.SimGroup && !o.Hidden { // flags, variables and files only
				general = append(general, o)
			}
		}
	}
	setup := ui.Setup{
		Missing:            missing,
		General:            ui.FieldsOf(general, r.Values),
		Workloads:          plugin.Names("workload"),
		WorkloadSummaries:  plugin.Summaries("workload"),
		ExportPath:         defaultExportPath,
		EngineServesStatus: func(u string) bool { return config.HasStatusSource("", strings.TrimSpace(u)) },
		CheckExportPath: func(path string) error {
			_, err := config.Parser(path)
			return err
		},
		WorkloadFields: func(name string) ([]ui.Field, error) {
			// The file and environment may already set its options.
			opts, v, err := s.WorkloadOptions(r, name)
			if err != nil {
				return nil, err
			}
			return ui.FieldsOf(opts, v), nil
		},
	}
	if r.Workload != nil {
		setup.Workload = r.Workload.Name()
	}
	setup.ExportPath = cmp.Or(r.Flags.ExportConfig, setup.ExportPath)
	return setup
}
