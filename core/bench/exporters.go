package bench

import (
	"context"

	"github.com/lmbench/lmbench/core/export"
	"github.com/lmbench/lmbench/core/record"
)

// Exporters are exporters to configure for a run that is written from
// journals rather than run (core/merge's merge, combine and re-export).
type Exporters []Exporter

// Configure configures every exporter for run.
func (e Exporters) Configure(ctx context.Context, run record.Run) ([]export.Target, error) {
	return configureExporters(ctx, e, run)
}
