package bench

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/outdir"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// snapshot reads every file in dir, by name.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// runOnce executes a two-request run into dir.
func runOnce(t *testing.T, dir string, exp *fakeExporter, edit func(*Plan)) (*Result, error) {
	t.Helper()
	var exps []*fakeExporter
	if exp != nil {
		exps = append(exps, exp)
	}
	p, _ := plan(t, batches(nil, []protocol.Request{chat("m0", nil), chat("m1", nil)}), &fakeSender{}, exps...)
	p.Report.OutputDir, p.Report.ExportJSON = dir, true
	if edit != nil {
		edit(&p)
	}
	return Execute(context.Background(), p)
}

// A directory that holds a run is refused, before and at the start of a
// run, and nothing of the old run changes; --overwrite removes every file
// of the old run (its exporters' too, named in its journal) and nothing
// else.
func TestOutputDirHoldingARunIsRefusedUnlessOverwrite(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	first, err := runOnce(t, dir, &fakeExporter{writes: "custom.csv"}, nil)
	if err != nil || first.Err != nil {
		t.Fatalf("first run: %v, %v", err, first.Err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	for _, name := range []string{record.JournalName, record.SummaryName, "custom.csv"} {
		if _, ok := before[name]; !ok {
			t.Fatalf("the first run left no %s: %v", name, before)
		}
	}

	o := config.Output{Dir: dir, Origin: "--output-dir"}
	err = outdir.Check(&o)
	if err == nil || !strings.Contains(err.Error(), "--output-dir "+dir+": holds a run") || !strings.Contains(err.Error(), "--overwrite") {
		t.Fatalf("outdir.Check = %v, want the directory refused, naming --overwrite", err)
	}
	snd := &fakeSender{}
	p, _ := plan(t, batches(nil, []protocol.Request{chat("x", nil)}), snd)
	p.Report.OutputDir = dir
	if _, err := Execute(context.Background(), p); err == nil || !strings.Contains(err.Error(), "holds a run") {
		t.Fatalf("Execute into the old run = %v, want it refused", err)
	}
	if n := len(snd.got); n != 0 {
		t.Errorf("the refused run sent %d requests", n)
	}
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Fatalf("the refused run changed the old one (-before +after):\n%s", diff)
	}

	o.Overwrite = true
	if err := outdir.Check(&o); err != nil {
		t.Fatalf("outdir.Check with --overwrite: %v", err)
	}
	second, err := runOnce(t, dir, nil, func(p *Plan) { p.Overwrite, p.Report.ExportJSON = true, false })
	if err != nil || second.Err != nil {
		t.Fatalf("second run: %v, %v", err, second.Err)
	}
	after := snapshot(t, dir)
	var names []string
	for name := range after {
		names = append(names, name)
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{record.JournalName, "notes.txt"}, names); diff != "" {
		t.Errorf("files after --overwrite (-want +got):\n%s", diff)
	}
	if c := readJournalAt(t, dir); c.Run.ID != second.RunID {
		t.Errorf("the journal is run %s's, want the new run %s", c.Run.ID, second.RunID)
	}
}

// A directory of lmbench's choosing is made new for the run, gets a free
// name when taken, and the latest link points at the newest.
func TestNewRunDirectoriesAndTheLatestLink(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), config.ResultsRoot)
	var dirs []string
	for range 2 {
		o := config.Output{Dir: filepath.Join(root, "2026-12-02T06-00-00Z-fake"), Auto: true}
		if err := outdir.Check(&o); err != nil {
			t.Fatal(err)
		}
		res, err := runOnce(t, o.Dir, nil, func(p *Plan) { p.NewDir = true })
		if err != nil || res.Err != nil {
			t.Fatalf("run into %s: %v, %v", o.Dir, err, res.Err)
		}
		dirs = append(dirs, o.Dir)
	}
	if want := []string{filepath.Join(root, "2026-12-02T06-00-00Z-fake"), filepath.Join(root, "2026-12-02T06-00-00Z-fake-2")}; !cmp.Equal(want, dirs) {
		t.Fatalf("directories %v, want %v", dirs, want)
	}
	for _, d := range dirs {
		if c := readJournalAt(t, d); c.Summary == nil || c.Summary.Status != record.Completed {
			t.Errorf("%s: not a complete run", d)
		}
	}
	target, err := os.Readlink(filepath.Join(root, config.Latest))
	if err != nil || target != filepath.Base(dirs[1]) {
		t.Errorf("latest -> %q (%v), want %q", target, err, filepath.Base(dirs[1]))
	}
}

func readJournalAt(t *testing.T, dir string) *record.Contents {
	t.Helper()
	c, err := record.ReadJournal(filepath.Join(dir, record.JournalName))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
