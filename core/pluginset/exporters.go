package pluginset

import (
	"slices"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/plugin"
)

// Exporters starts the exporters named (a name given twice starts once:
// --exporter parquet --exporter parquet writes one file instead of failing
// as two plugins claiming one flag prefix), then those at paths, and
// returns them with a registry of their options. An error names the flag,
// --exporter or --exporter-plugin.
func (p *Plugins) Exporters(names, paths []string) ([]*ExporterPlugin, *config.Registry, error) {
	var out []*ExporterPlugin
	reg := config.NewRegistry()
	for i, n := range slices.Concat(names, paths) {
		origin := "--exporter-plugin"
		if i < len(names) {
			if origin = "--exporter"; slices.Contains(names[:i], n) {
				continue
			}
		}
		e, err := p.Exporter(n, origin)
		if err == nil {
			_, err = reg.AddPlugin(e.Name(), e.Prefix(), e.Options())
		}
		if err != nil {
			return nil, nil, err
		}
		out = append(out, e)
	}
	return out, reg, nil
}

// ExportersFromFlags is the second pass of lmbench export and merge: it
// starts the exporters named and at paths (Exporters), adds their options
// to fs, parses args with fs (an error is a config.UsageError) and configures
// each exporter from its flags and LMBENCH_* variables, as a run does.
func (p *Plugins) ExportersFromFlags(names, paths []string, fs *pflag.FlagSet, args []string) (Exporters, error) {
	exps, reg, err := p.Exporters(names, paths)
	if err != nil {
		return nil, err
	}
	reg.RegisterFlags(fs, func(*config.Option) bool { return true })
	if err := fs.Parse(args); err != nil {
		return nil, config.UsageError{Err: err}
	}
	vals, err := reg.Load(config.Sources{Flags: fs})
	if err != nil {
		return nil, err
	}
	return Configured(exps, vals), nil
}

// Configured are exps configured from vals: each exporter's options and
// where each came from.
func Configured(exps []*ExporterPlugin, vals *config.Values) Exporters {
	var out Exporters
	for _, e := range exps {
		out = append(out, Exporter{Name: e.Name(), Plugin: plugin.NewExporter(e.Client),
			Options: vals.PluginValues(e.Name()), Flag: vals.PluginOrigin(e.Prefix())})
	}
	return out
}
