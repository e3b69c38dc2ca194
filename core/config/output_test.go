package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Without --output-dir a run gets a directory of its own under
// ResultsRoot, named for its time and workload; a given directory is
// kept as given, and a shard keeps the working directory.
func TestOutputDirDefaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		environ []string
		wantDir string // "" = a new directory for workload
		auto    bool
	}{
		{"default", []string{"LMBENCH_WORKLOAD=long-doc-qa"}, "", true},
		{"by path", []string{"LMBENCH_WORKLOAD_PLUGIN=/opt/p/lmbench-workload-my-tool"}, "", true},
		{"given", []string{"LMBENCH_WORKLOAD=mrc", "LMBENCH_OUTPUT_DIR=out", "LMBENCH_OVERWRITE=true"}, "out", false},
		{"shard", []string{"LMBENCH_WORKLOAD=mrc", "LMBENCH_SHARD=0/2", "LMBENCH_START_AT=2030-01-01T00:00:00Z"}, ".", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := buildFrom(t, c.environ...)
			if err != nil {
				t.Fatal(err)
			}
			o := s.Output
			if o.Auto != c.auto {
				t.Errorf("Auto = %v, want %v", o.Auto, c.auto)
			}
			if c.wantDir != "" {
				if o.Dir != c.wantDir {
					t.Errorf("Dir = %q, want %q", o.Dir, c.wantDir)
				}
				return
			}
			name := strings.TrimPrefix(o.Dir, ResultsRoot+string(filepath.Separator))
			at, err := time.Parse("2006-01-02T15-04-05Z", name[:len("2006-01-02T15-04-05Z")])
			if err != nil || time.Since(at) > time.Hour || time.Since(at) < -time.Minute {
				t.Errorf("Dir = %q: want %s/<UTC time now>-<workload> (%v)", o.Dir, ResultsRoot, err)
			}
			if want := strings.TrimPrefix(filepath.Base(s.WorkloadPlugin+s.Workload), "lmbench-workload-"); !strings.HasSuffix(o.Dir, "Z-"+want) {
				t.Errorf("Dir = %q, want it to end with the workload's name %q", o.Dir, want)
			}
		})
	}
	if s, _ := buildFrom(t, "LMBENCH_WORKLOAD=mrc", "LMBENCH_OUTPUT_DIR=out", "LMBENCH_OVERWRITE=true"); s == nil || !s.Output.Overwrite {
		t.Errorf("LMBENCH_OVERWRITE=true did not set Overwrite")
	}
}

func TestRunDir(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 2, 6, 35, 24, 0, time.FixedZone("CET", 3600))
	for workload, want := range map[string]string{
		"long-doc-qa": "2026-12-02T05-35-24Z-long-doc-qa",
		"a/b c":       "2026-12-02T05-35-24Z-a-b-c",
		"..":          "2026-12-02T05-35-24Z-run",
	} {
		if got := RunDir(workload, at); got != filepath.Join(ResultsRoot, want) {
			t.Errorf("RunDir(%q) = %q, want %q", workload, got, filepath.Join(ResultsRoot, want))
		}
	}
}
