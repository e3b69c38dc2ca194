package merge

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/export"
	"github.com/lmbench/lmbench/core/record"
)

// Combine runs several journals through exporters as one run: every
// record of every part, in order, each carrying its part's tags (a
// sweep's point and swept value), so the exporters write one file with a
// column per tag. Exporters write through a temporary name and rename on
// Finish, so the file left under the target name is always a complete one.
type Combine struct {
	Parts []CombinePart
	// TagKeys are the keys the parts set, in column order; they come
	// before the first part's own tag keys.
	TagKeys   []string
	OutputDir string
	Exporters Exporters
	// SummaryJSON is what the exporters get as the summary's JSON (a
	// sweep's sweep_summary.json).
	SummaryJSON json.RawMessage
	Log         zerolog.Logger
}

// CombinePart is one journal and the tags its records get (they replace a
// record's own tags of the same keys).
type CombinePart struct {
	Journal string
	Tags    map[string]string
}

// Run exports the parts. A part whose journal does not exist is skipped
// (a point that failed before it started); one that cannot be read is an
// error naming it.
func (c Combine) Run(ctx context.Context) ([]export.Result, int, error) {
	var run record.Run
	var recs []record.Record
	var sum record.Summary
	found := false
	for _, p := range c.Parts {
		if _, err := os.Stat(p.Journal); os.IsNotExist(err) {
			continue
		}
		j, s, _, err := ReadJournal(p.Journal)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", p.Journal, err)
		}
		if !found {
			run, found = j.Run, true
			keys := slices.Clone(c.TagKeys)
			for _, k := range j.Run.TagKeys {
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
			run.TagKeys = keys
		}
		for i := range j.Records {
			r := j.Records[i]
			tags := make(map[string]string, len(r.Tags)+len(p.Tags))
			maps.Copy(tags, r.Tags)
			maps.Copy(tags, p.Tags)
			r.Tags = tags
			recs = append(recs, r)
		}
		sum.Total += s.Total
		sum.Successful += s.Successful
		sum.Failed += s.Failed
		sum.Elapsed += s.Elapsed
		sum.Interrupted = sum.Interrupted || s.Interrupted
	}
	if !found {
		return nil, 0, nil
	}
	if err := os.MkdirAll(c.OutputDir, 0o755); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", c.OutputDir, err)
	}
	run.OutputDir = c.OutputDir
	sum.RunID, sum.JSON = run.ID, c.SummaryJSON
	results, err := exportAll(ctx, c.Exporters, run, recs, sum, c.Log)
	if err != nil {
		return nil, 0, err
	}
	return results, len(recs), nil
}
