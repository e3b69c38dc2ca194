package htmlreport

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/lmbench/lmbench/core/analysis"
)

// WriteFile writes the page to a temporary file beside path and renames
// it into place, so a reader never sees half a report.
func WriteFile(path string, runs []*analysis.Run, opt Options) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".report-*.html")
	if err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := Write(tmp, runs, opt); err != nil {
		tmp.Close()
		return fmt.Errorf("report %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	return nil
}

// RunReportName is the report lmbench run --report and lmbench merge
// write into a run's output directory.
const RunReportName = "report.html"

// WriteRun writes the report of the run in dir into dir (RunReportName)
// and returns its path.
func WriteRun(dir, version string) (string, error) {
	r, err := analysis.Load(dir)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, RunReportName)
	return path, WriteFile(path, []*analysis.Run{r}, Options{Version: version})
}
