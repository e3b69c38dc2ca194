package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/bench"
	"github.com/lmbench/lmbench/core/merge"
	"github.com/lmbench/lmbench/core/plugin"
	"github.com/lmbench/lmbench/core/sweep"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// sweepParquet is how a sweep's points export Parquet: the plugin (by the
// path it was found at) and the options the run gave it.
type sweepParquet struct {
	path    string
	options protocol.Values
}

// parquetOf is the run's parquet exporter, or nil when it has none.
func parquetOf(r *resolved) *sweepParquet {
	for _, e := range r.exps {
		if e.Name() != "parquet" {
			continue
		}
		opts := r.vals.PluginValues(e.Name())
		opts["file"] = sweep.ParquetName // beside the combined CSV, whatever each point's file is called
		return &sweepParquet{path: e.Path, options: opts}
	}
	return nil
}

// combine rewrites sweep_results.parquet from the finished points'
// journals through the parquet exporter plugin, each row with the point's
// number and swept value as the tags "point" and the swept key (columns
// tag_point and tag_KEY), and the sweep's summary in the footer. The
// plugin writes a temporary file and renames it, so a kill leaves the
// previous complete file.
func (pq *sweepParquet) combine(stderr io.Writer) sweep.Combiner {
	return func(dir string, res *sweep.Result, summary []byte) error {
		s := newSession(nil, io.Discard, stderr)
		s.setLog(zerolog.New(stderr).Level(zerolog.WarnLevel))
		defer s.close()
		e, err := s.plugins.Exporter(pq.path, "--exporter")
		if err != nil {
			return fmt.Errorf("%s: %w", sweep.ParquetName, err)
		}
		c := merge.Combine{
			TagKeys:     res.TagKeys(),
			OutputDir:   dir,
			Exporters:   bench.Exporters{{Name: e.Name(), Plugin: plugin.NewExporter(e.Client), Options: pq.options, Flag: func(o string) string { return "--parquet-" + o }}},
			SummaryJSON: json.RawMessage(summary),
			Log:         zerolog.Nop(),
		}
		for _, p := range res.Parts(dir) {
			c.Parts = append(c.Parts, merge.CombinePart{Journal: p.Journal, Tags: p.Tags})
		}
		results, _, err := c.Run(context.Background())
		if err != nil {
			return fmt.Errorf("%s: %w", sweep.ParquetName, err)
		}
		for _, r := range results {
			if r.Err != nil {
				return fmt.Errorf("%s: %w", sweep.ParquetName, r.Err)
			}
		}
		return nil
	}
}
