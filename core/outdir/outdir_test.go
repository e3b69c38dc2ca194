package outdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/record"
)

// A directory of lmbench's choosing gets a free name; one given that
// holds a run is refused naming its origin, unless --overwrite.
func TestCheck(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	taken := filepath.Join(root, "run")
	for _, d := range []string{taken, taken + "-2"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	auto := config.Output{Dir: taken, Auto: true}
	if err := Check(&auto); err != nil || auto.Dir != taken+"-3" {
		t.Errorf("Check(auto %s) = %v, dir %q, want %q", taken, err, auto.Dir, taken+"-3")
	}
	if err := os.WriteFile(filepath.Join(taken, record.JournalName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	given := config.Output{Dir: taken, Origin: "--output-dir"}
	if err := Check(&given); err == nil || !strings.Contains(err.Error(), "--output-dir "+taken) || !strings.Contains(err.Error(), record.JournalName) {
		t.Errorf("Check(%s holding a journal) = %v, want it refused naming --output-dir and the journal", taken, err)
	}
	given.Overwrite = true
	if err := Check(&given); err != nil {
		t.Errorf("Check with --overwrite = %v", err)
	}
}

// Make with overwrite removes the run's own files and nothing else.
func TestMakeOverwriteKeepsOtherFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{record.JournalName, record.SummaryName, ReportName, "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Make(dir, false, false, zerolog.Nop()); err == nil {
		t.Fatal("Make without overwrite into a run's directory succeeded")
	}
	if err := Make(dir, false, true, zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if diff := cmp.Diff([]string{"notes.txt"}, left); diff != "" {
		t.Errorf("files left (-want +got):\n%s", diff)
	}
}

// Files names each file inside dir once and leaves out those outside it.
func TestFiles(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	got := Files(dir, []string{filepath.Join(dir, "a.csv"), filepath.Join(dir, "a.csv"), filepath.Join(dir, "sub", "b.parquet"), filepath.Join(filepath.Dir(dir), "elsewhere.csv")})
	if diff := cmp.Diff([]string{"a.csv", filepath.Join("sub", "b.parquet")}, got); diff != "" {
		t.Errorf("Files (-want +got):\n%s", diff)
	}
}
