package outdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/enginemetrics"
	"github.com/lmbench/lmbench/core/record"
)

// ReportName is report.html's name inside the output directory (lmbench
// run --report).
const ReportName = "report.html"

// runMarkers are the files that make a directory hold a run; ownFiles
// are the files a run may leave whatever its exporters (the exporters'
// are named in the journal's summary line).
var (
	runMarkers = []string{record.JournalName, record.SummaryName}
	ownFiles   = []string{record.JournalName, record.SummaryName, ReportName, enginemetrics.FileName}
)

// Check is the output directory's check before anything is
// contacted: a directory that holds a run is refused unless --overwrite;
// a directory of lmbench's choosing gets a free name (a -2, -3, … suffix
// when another run of the workload started in the same second).
func Check(o *config.Output) error {
	if o.Auto {
		base := o.Dir
		for i := 2; exists(o.Dir); i++ {
			o.Dir = fmt.Sprintf("%s-%d", base, i)
		}
		return nil
	}
	if o.Overwrite {
		return nil
	}
	if held := heldRun(o.Dir); len(held) > 0 {
		return fmt.Errorf("%s %s: holds a run (%s): give another directory (or none: each run then gets its own under %s), or --overwrite to replace that run (its files are removed first)",
			o.Origin, o.Dir, strings.Join(held, ", "), config.ResultsRoot)
	}
	return nil
}

// heldRun lists the files that make dir hold a run (none: it holds none).
func heldRun(dir string) []string {
	var held []string
	for _, name := range runMarkers {
		if exists(filepath.Join(dir, name)) {
			held = append(held, name)
		}
	}
	return held
}

// Make gets the run's directory ready before its journal is created: a
// new directory, linked from Latest beside it, when lmbench chose it
// (newDir); with overwrite, the old run's files removed first; otherwise
// a directory that holds a run is refused (Check said so already, unless
// a run started there since).
func Make(dir string, newDir, overwrite bool, log zerolog.Logger) error {
	switch {
	case newDir:
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return fmt.Errorf("output directory %s: %w", dir, err)
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("output directory %s: %w (another run started there at the same time? give --output-dir)", dir, err)
		}
		linkLatest(dir, log)
		return nil
	case overwrite:
		if err := removeRun(dir, log); err != nil {
			return fmt.Errorf("--overwrite %s: %w", dir, err)
		}
	default:
		if held := heldRun(dir); len(held) > 0 {
			return fmt.Errorf("--output-dir %s: holds a run (%s): give another directory, or --overwrite to replace it", dir, strings.Join(held, ", "))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--output-dir %s: %w", dir, err)
	}
	return nil
}

// removeRun removes every file of the run dir holds: its journal, the
// files the journal's summary names, and those a run leaves whatever its
// exporters. Nothing else in dir is touched.
func removeRun(dir string, log zerolog.Logger) error {
	names := slices.Clone(ownFiles)
	if c, err := record.ScanJournal(filepath.Join(dir, record.JournalName), func(*record.Record) error { return nil }); err == nil && c.Summary != nil {
		for _, f := range c.Summary.Files {
			if filepath.IsLocal(f) {
				names = append(names, f)
			}
		}
	}
	var errs []error
	removed := 0
	for _, name := range names {
		err := os.Remove(filepath.Join(dir, name))
		switch {
		case err == nil:
			removed++
		case !errors.Is(err, fs.ErrNotExist):
			errs = append(errs, err)
		}
	}
	if removed > 0 {
		log.Info().Str("dir", dir).Int("files", removed).Msg("--overwrite: removed the earlier run's files")
	}
	return errors.Join(errs...)
}

// linkLatest points the Latest link beside dir at it, replacing the link
// in one rename; a file system without symbolic links only costs the
// link (a warning).
func linkLatest(dir string, log zerolog.Logger) {
	link := filepath.Join(filepath.Dir(dir), config.Latest)
	if fi, err := os.Lstat(link); err == nil && fi.Mode()&fs.ModeSymlink == 0 {
		log.Warn().Str("path", link).Msg("not linking the latest run: the path exists and is not a link")
		return
	}
	tmp := fmt.Sprintf("%s.%d.tmp", link, os.Getpid())
	err := os.Symlink(filepath.Base(dir), tmp)
	if err == nil {
		if err = os.Rename(tmp, link); err != nil {
			os.Remove(tmp)
		}
	}
	if err != nil {
		log.Warn().Err(err).Str("path", link).Msg("could not link the latest run")
	}
}

// Files are the names inside dir of the files a run wrote besides its
// journal, for the journal's summary line.
func Files(dir string, paths []string) []string {
	var out []string
	for _, p := range paths {
		if rel, err := filepath.Rel(dir, p); err == nil && filepath.IsLocal(rel) && !slices.Contains(out, rel) {
			out = append(out, rel)
		}
	}
	return out
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
