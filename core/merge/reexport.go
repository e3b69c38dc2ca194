package merge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/export"
	"github.com/lmbench/lmbench/core/record"
)

// Result is an exporter's outcome: the files it wrote, or its error.
type Result = export.Result

// Reexport is a journal to rebuild result files from.
type Reexport struct {
	Journal   string
	OutputDir string // "" = the journal's directory
	Exporters Exporters
	Log       zerolog.Logger
}

// Reexported is what a re-export did.
type Reexported struct {
	Run     record.Run
	Records int
	// Computed: the journal had no summary (the run was killed); the one
	// exporters got was computed from its records and marked interrupted.
	Computed bool
	Results  []export.Result
}

// Run re-exports: every record of the journal goes to every exporter,
// in order, as during the run, then the summary.
func (r Reexport) Run(ctx context.Context) (*Reexported, error) {
	c, summary, computed, err := ReadJournal(r.Journal)
	if err != nil {
		return nil, fmt.Errorf("--journal: %w", err)
	}
	if computed {
		r.Log.Warn().Str("journal", r.Journal).Msg("the journal has no summary (the run did not finish): the summary is computed from its records and marked interrupted")
	}
	outDir := r.OutputDir
	if outDir == "" {
		outDir = filepath.Dir(r.Journal)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("--output-dir %s: %w", outDir, err)
	}
	run := c.Run
	run.OutputDir = outDir
	results, err := exportAll(ctx, r.Exporters, run, c.Records, summary, r.Log)
	if err != nil {
		return nil, err
	}
	out := &Reexported{Run: c.Run, Records: len(c.Records), Computed: computed, Results: results}
	r.Log.Info().Int("records", len(c.Records)).Str("run_id", c.Run.ID).Msg("journal exported")
	return out, nil
}
