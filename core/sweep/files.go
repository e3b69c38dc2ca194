package sweep

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/lmbench/lmbench/core/record"
)

// pointResults is the CSV each point's run writes.
const pointResults = "bench_results.csv"

// write rewrites sweep_summary.json, sweep_results.csv and the
// Combiner's files from the points so far, each through a temporary file
// and a rename, so a kill leaves the last complete versions.
func (s *sweeper) write() {
	dir := s.cfg.OutputDir
	b, err := json.MarshalIndent(s.res, "", "  ")
	if err == nil {
		err = writeAtomic(filepath.Join(dir, SummaryName), func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err })
	}
	if err == nil {
		err = writeAtomic(filepath.Join(dir, ResultsName), func(w io.Writer) error { return combineCSV(w, dir, s.res) })
	}
	if err == nil && s.cfg.Combine != nil {
		err = s.cfg.Combine(dir, s.res, b)
	}
	if err != nil {
		s.filesErr = err
		fmt.Fprintf(s.cfg.Log, "lmbench sweep: %v\n", err)
	}
}

// combineCSV writes every point's bench_results.csv rows after a point
// column and the swept option's column.
func combineCSV(w io.Writer, dir string, r *Result) error {
	cw := csv.NewWriter(w)
	var header []string
	for _, p := range r.Points {
		name := filepath.Join(p.Dir, pointResults)
		f, err := os.Open(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue // no CSV (--no-csv, or a point that failed first)
		}
		if err != nil {
			return err
		}
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if len(rows) == 0 {
			continue
		}
		if header == nil {
			header = rows[0]
			if err := cw.Write(append([]string{"point", r.Key}, header...)); err != nil {
				return err
			}
		} else if !slices.Equal(rows[0], header) {
			return fmt.Errorf("%s: its columns differ from the first point's: not combined", name)
		}
		for _, row := range rows[1:] {
			if err := cw.Write(append([]string{strconv.Itoa(p.Number), FormatValue(p.Value)}, row...)); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}

// Part is one point's journal and the tags its records get in a combined
// file: the point's number and swept value.
type Part struct {
	Journal string
	Tags    map[string]string
}

// TagKeys are the tags Parts set, in column order: "point" and the swept
// key.
func (r *Result) TagKeys() []string { return []string{"point", r.Key} }

// Parts are the points' journals in dir, in the order run.
func (r *Result) Parts(dir string) []Part {
	var out []Part
	for _, p := range r.Points {
		out = append(out, Part{
			Journal: filepath.Join(dir, p.Dir, record.JournalName),
			Tags:    map[string]string{"point": strconv.Itoa(p.Number), r.Key: FormatValue(p.Value)},
		})
	}
	return out
}
