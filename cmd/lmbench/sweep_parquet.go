package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/host"
	"github.com/lmbench/lmbench/core/plugin"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// sweepParquetName is the combined Parquet file a sweep writes when its
// points use the parquet exporter.
const sweepParquetName = "sweep_results.parquet"

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
		opts := r.pluginOptions(e)
		opts["file"] = sweepParquetName // beside the combined CSV, whatever each point's file is called
		return &sweepParquet{path: e.Path, options: opts}
	}
	return nil
}

// combineParquet rewrites sweep_results.parquet from the finished points'
// journals through the parquet exporter plugin, each row with the point's
// number and swept value as the tags "point" and the swept key (columns
// tag_point and tag_KEY), and the sweep's summary in the footer. The
// plugin writes a temporary file and renames it, so a kill leaves the
// previous complete file.
func combineParquet(stderr io.Writer, dir string, sum *sweepSummary, pq *sweepParquet, summaryJSON []byte) error {
	s := newSession(nil, io.Discard, stderr)
	s.setLog(zerolog.New(stderr).Level(zerolog.WarnLevel))
	defer s.close()
	e, err := s.plugins.Exporter(pq.path, "--exporter")
	if err != nil {
		return fmt.Errorf("%s: %w", sweepParquetName, err)
	}
	c := host.Combine{
		TagKeys:     []string{"point", sum.Key},
		OutputDir:   dir,
		Exporters:   []host.Exporter{{Name: e.Name(), Plugin: plugin.NewExporter(e.Client), Options: pq.options, Flag: func(o string) string { return "--parquet-" + o }}},
		SummaryJSON: json.RawMessage(summaryJSON),
		Log:         zerolog.Nop(),
	}
	for _, p := range sum.Points {
		c.Parts = append(c.Parts, host.CombinePart{
			Journal: filepath.Join(dir, p.Dir, record.JournalName),
			Tags:    map[string]string{"point": strconv.Itoa(p.Point), sum.Key: formatValue(p.Value)},
		})
	}
	results, _, err := c.Run(context.Background())
	if err != nil {
		return fmt.Errorf("%s: %w", sweepParquetName, err)
	}
	for _, res := range results {
		if res.Err != nil {
			return fmt.Errorf("%s: %w", sweepParquetName, res.Err)
		}
	}
	return nil
}
