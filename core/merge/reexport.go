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
	// Unreadable counts the journal's lines left out: a last line cut
	// short by a host killed mid-write (0 or 1; any other malformed line
	// fails the export).
	Unreadable int
	// Summary is the bench_summary.json written beside the files ("": the
	// journal's summary had no content, a version 1 journal's).
	Summary string
	Results []export.Result
}

// Run re-exports: every record of the journal goes to every exporter,
// in order, as during the run, then the summary.
func (r Reexport) Run(ctx context.Context) (*Reexported, error) {
	c, summary, computed, err := ReadJournal(r.Journal)
	if err != nil {
		return nil, fmt.Errorf("--journal: %w", err)
	}
	unreadable := 0
	if c.Torn {
		unreadable = 1
		r.Log.Warn().Str("journal", r.Journal).Int("unreadable_lines", unreadable).
			Msg("the journal's last line is cut short (the run was killed while writing it): 1 line unreadable, left out")
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
	// bench_summary.json says what the files say: the run's own summary,
	// or the computed one marked interrupted (never an older file's).
	var path string
	if len(summary.JSON) > 0 {
		path = filepath.Join(outDir, record.SummaryName)
		if err := record.WriteFileAtomic(path, summary.JSON); err != nil {
			return nil, fmt.Errorf("JSON summary: %w", err)
		}
	}
	out := &Reexported{Run: c.Run, Records: len(c.Records), Computed: computed, Unreadable: unreadable,
		Summary: path, Results: results}
	r.Log.Info().Int("records", len(c.Records)).Str("run_id", c.Run.ID).Msg("journal exported")
	return out, nil
}
