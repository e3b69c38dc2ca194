package pluginset

import (
	"context"
	"errors"

	"github.com/lmbench/lmbench/core/export"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// ExportTarget is an exporter as a run uses it (plugin.Exporter). Its
// errors name the exporter already.
type ExportTarget interface {
	Configure(ctx context.Context, opts protocol.Values, run record.Run) (protocol.Configured, error)
	export.Exporter
}

// Exporter is an exporter to configure and feed.
type Exporter struct {
	Name    string
	Plugin  ExportTarget
	Options protocol.Values // set above the plugin's defaults
	// Flag maps an option name to where its value came from, for errors.
	Flag func(option string) string
}

// Exporters are exporters to configure for a run that is written from
// journals rather than run (core/merge's merge, combine and re-export).
type Exporters []Exporter

// Configure configures every exporter for run.
func (e Exporters) Configure(ctx context.Context, run record.Run) ([]export.Target, error) {
	return Configure(ctx, e, run)
}

// Configure configures every exporter in exps for run; an exporter's
// field errors name the flags its options came from.
func Configure(ctx context.Context, exps []Exporter, run record.Run) ([]export.Target, error) {
	var targets []export.Target
	for _, e := range exps {
		resp, err := e.Plugin.Configure(ctx, e.Options, run)
		if err != nil {
			return nil, err
		}
		if len(resp.Errors) > 0 {
			return nil, fieldErrors(resp.Errors, e.Name, e.Flag)
		}
		targets = append(targets, export.Target{Name: e.Name, Exporter: e.Plugin, Wrap: named})
	}
	return targets, nil
}

// named passes on an error that names its exporter already.
func named(_ string, err error) error { return err }

// FieldError is a Configure error pointing at a flag.
type FieldError struct{ Flag, Message string }

func (e *FieldError) Error() string {
	if e.Flag == "" {
		return e.Message
	}
	return e.Flag + ": " + e.Message
}

// FieldErrors converts a plugin's Configure errors, each naming the flag
// (or key, or variable) its option's value came from.
func FieldErrors(errs []protocol.FieldError, plugin string, flag func(string) string) error {
	return fieldErrors(errs, plugin, flag)
}

func fieldErrors(errs []protocol.FieldError, plugin string, flag func(string) string) error {
	var out []error
	for _, fe := range errs {
		f := ""
		if fe.Option != "" && flag != nil {
			f = flag(fe.Option)
		}
		if f == "" && plugin != "" {
			f = plugin
		}
		out = append(out, &FieldError{Flag: f, Message: fe.Message})
	}
	return errors.Join(out...)
}
