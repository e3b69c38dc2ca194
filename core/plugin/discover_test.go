package plugin

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// touch creates dir/name with the given mode (0o755 = executable).
func touch(t *testing.T, dir, name string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // WriteFile's mode is masked by umask
		t.Fatal(err)
	}
	return path
}

func skipOnWindows(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("uses Unix executable bits and shell scripts")
	}
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	skipOnWindows(t)
	first, second, missing := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "missing")

	touch(t, first, "lmbench-workload-long-doc-qa", 0o755)
	touch(t, first, "lmbench-exporter-csv", 0o755)
	touch(t, first, "lmbench-workload-notexec", 0o644)    // not executable
	touch(t, first, "lmbench-workload-x.sha256", 0o755)   // dots: not a plugin name
	touch(t, first, "lmbench-workload-v1.2", 0o755)       // dots
	touch(t, first, "lmbench-workload-with space", 0o755) // spaces
	touch(t, first, "lmbench-workload-", 0o755)           // no name
	touch(t, first, "lmbench-sink-x", 0o755)              // unknown kind
	touch(t, first, "workload-random-prefill", 0o755)     // no prefix
	touch(t, first, "lmbench-workload-random-prefill", 0o644)
	if err := os.Mkdir(filepath.Join(first, "lmbench-workload-adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	touch(t, second, "lmbench-workload-long-doc-qa", 0o755)    // shadowed by first
	touch(t, second, "lmbench-workload-random-prefill", 0o755) // first's copy is not executable: this one wins
	touch(t, second, "lmbench-workload-notexec", 0o644)
	touch(t, second, "lmbench-workload-aaa", 0o755)
	touch(t, second, "lmbench-exporter-csv", 0o644) // not executable: not listed as shadowing

	dirs := []string{first, missing, second, first} // a missing dir is skipped; a repeated one shadows nothing
	all := []Candidate{
		{Kind: "exporter", Name: "csv", Path: filepath.Join(first, "lmbench-exporter-csv")},
		{Kind: "workload", Name: "aaa", Path: filepath.Join(second, "lmbench-workload-aaa")},
		{Kind: "workload", Name: "long-doc-qa", Path: filepath.Join(first, "lmbench-workload-long-doc-qa"),
			Shadowed: []string{filepath.Join(second, "lmbench-workload-long-doc-qa")}},
		{Kind: "workload", Name: "random-prefill", Path: filepath.Join(second, "lmbench-workload-random-prefill")},
	}
	tests := []struct {
		kind string
		want []Candidate
	}{
		{"", all},
		{"workload", all[1:]},
		{"exporter", all[:1]},
		{"sink", []Candidate{}},
	}
	for _, tt := range tests {
		t.Run("kind="+tt.kind, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, Discover(tt.kind, dirs)); diff != "" {
				t.Errorf("Discover(%q) (-want +got):\n%s", tt.kind, diff)
			}
		})
	}
	if got := Discover("", nil); len(got) != 0 {
		t.Errorf("Discover with no dirs = %v", got)
	}
}

func TestParseName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file, kind, name string
		ok               bool
	}{
		{"lmbench-workload-long-doc-qa", "workload", "long-doc-qa", true},
		{"lmbench-exporter-csv", "exporter", "csv", true},
		{"lmbench-exporter-workload-x", "exporter", "workload-x", true},
		{"lmbench-workload-", "", "", false},
		{"lmbench-workload-a.b", "", "", false},
		{"lmbench-workload-a b", "", "", false},
		{"lmbench-other-x", "", "", false},
		{"lmbench-workloadx", "", "", false},
		{"xlmbench-workload-x", "", "", false},
	}
	for _, tt := range tests {
		kind, name, ok := parseName(tt.file)
		if kind != tt.kind || name != tt.name || ok != tt.ok {
			t.Errorf("parseName(%q) = %q, %q, %v; want %q, %q, %v", tt.file, kind, name, ok, tt.kind, tt.name, tt.ok)
		}
	}
}

// Not parallel: t.Setenv.
func TestSearchDirs(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the data directory comes from %AppData%")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	exeDir := filepath.Dir(exe)
	defaults := []string{exeDir, filepath.Join(exeDir, "plugins"), "/xdg/lmbench/plugins"}
	list := string(os.PathListSeparator)
	tests := []struct {
		name, path string
		want       []string
	}{
		{"default: next to the binary, then the data dir", "", defaults},
		{"LMBENCH_PLUGIN_PATH comes first and adds to the defaults", "/opt/a" + list + "/opt/b",
			append([]string{"/opt/a", "/opt/b"}, defaults...)},
		{"empty entries are skipped", list + "/opt/a" + list + list, append([]string{"/opt/a"}, defaults...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("LMBENCH_PLUGIN_PATH", tt.path)
			t.Setenv("XDG_DATA_HOME", "/xdg")
			if diff := cmp.Diff(tt.want, SearchDirs()); diff != "" {
				t.Errorf("SearchDirs (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("no XDG_DATA_HOME: ~/.local/share", func(t *testing.T) {
		t.Setenv("LMBENCH_PLUGIN_PATH", "")
		t.Setenv("XDG_DATA_HOME", "")
		t.Setenv("HOME", "/home/u")
		dirs := SearchDirs()
		if got, want := dirs[len(dirs)-1], "/home/u/.local/share/lmbench/plugins"; got != want {
			t.Errorf("last dir = %q, want %q (all: %v)", got, want, dirs)
		}
	})
}

// A plugin in LMBENCH_PLUGIN_PATH shadows the installed one of the same
// name, and the installed plugins it does not name are still found.
// Not parallel: t.Setenv.
func TestPluginPathShadowsInstalledPlugins(t *testing.T) {
	skipOnWindows(t)
	extra, data := t.TempDir(), t.TempDir()
	installed := filepath.Join(data, "lmbench", "plugins")
	if err := os.MkdirAll(installed, 0o755); err != nil {
		t.Fatal(err)
	}
	mine := touch(t, extra, "lmbench-workload-long-doc-qa", 0o755)
	bundled := touch(t, installed, "lmbench-workload-long-doc-qa", 0o755)
	csv := touch(t, installed, "lmbench-exporter-csv", 0o755)
	t.Setenv("LMBENCH_PLUGIN_PATH", extra)
	t.Setenv("XDG_DATA_HOME", data)

	// Plugins next to the test binary (if any) are no concern here.
	var got []Candidate
	for _, c := range Discover("", SearchDirs()) {
		if c.Name == "long-doc-qa" || c.Name == "csv" {
			got = append(got, c)
		}
	}
	want := []Candidate{
		{Kind: "exporter", Name: "csv", Path: csv},
		{Kind: "workload", Name: "long-doc-qa", Path: mine, Shadowed: []string{bundled}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Discover (-want +got):\n%s", diff)
	}
	if p, err := Find("workload", "long-doc-qa", SearchDirs()); err != nil || p != mine {
		t.Errorf("Find(long-doc-qa) = %q, %v; want the one in LMBENCH_PLUGIN_PATH, %q", p, err, mine)
	}
	if p, err := Find("exporter", "csv", SearchDirs()); err != nil || p != csv {
		t.Errorf("Find(csv) = %q, %v; want the installed %q", p, err, csv)
	}
}

func TestFind(t *testing.T) {
	t.Parallel()
	skipOnWindows(t)
	dir, other := t.TempDir(), t.TempDir()
	exe := touch(t, dir, "lmbench-workload-alpha", 0o755)
	touch(t, dir, "lmbench-workload-beta", 0o755)
	touch(t, dir, "lmbench-exporter-gamma", 0o755)
	plain := touch(t, dir, "plain-file", 0o644)
	dirs := []string{dir, other}

	t.Run("by name", func(t *testing.T) {
		t.Parallel()
		got, err := Find("workload", "alpha", dirs)
		if err != nil || got != exe {
			t.Errorf("Find = %q, %v; want %q", got, err, exe)
		}
	})
	t.Run("by path", func(t *testing.T) {
		t.Parallel()
		// Any executable, whatever its name, when given as a path.
		script := touch(t, other, "my-plugin", 0o755)
		got, err := Find("workload", script, dirs)
		if err != nil || got != script {
			t.Errorf("Find = %q, %v; want %q", got, err, script)
		}
	})
	t.Run("relative path is made absolute", func(t *testing.T) {
		t.Parallel()
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(wd, exe)
		if err != nil || !strings.ContainsRune(rel, filepath.Separator) {
			t.Skipf("no relative path with a separator from %s to %s", wd, exe)
		}
		got, err := Find("workload", rel, dirs)
		if err != nil || got != exe {
			t.Errorf("Find(%q) = %q, %v; want %q", rel, got, err, exe)
		}
	})
	errTests := []struct {
		name, kind, arg string
		want            []string
	}{
		{"path not executable", "workload", plain, []string{plain, "not an executable file"}},
		{"path is a directory", "exporter", dir, []string{dir, "not an executable file"}},
		{"path missing", "workload", filepath.Join(dir, "nope"), []string{filepath.Join(dir, "nope"), "not an executable"}},
		{"unknown name", "workload", "delta", []string{`unknown workload "delta"`, "available: alpha, beta",
			"searched " + dir + string(os.PathListSeparator) + other}},
		// The kind filters: an exporter is not offered as a workload.
		{"wrong kind", "workload", "gamma", []string{`unknown workload "gamma"`, "available: alpha, beta"}},
		{"nothing installed", "exporter", "csv", []string{`unknown exporter "csv"`, "none found"}},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := dirs
			if tt.name == "nothing installed" {
				d = []string{other}
			}
			got, err := Find(tt.kind, tt.arg, d)
			if err == nil {
				t.Fatalf("Find(%q) = %q, want an error", tt.arg, got)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestPluginsWritableByEveryoneAreRefused(t *testing.T) {
	t.Parallel()
	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(open, "lmbench-workload-open")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	mine := t.TempDir()
	loose := filepath.Join(mine, "lmbench-workload-loose")
	if err := os.WriteFile(loose, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(loose, 0o757); err != nil {
		t.Fatal(err)
	}
	ok := filepath.Join(mine, "lmbench-workload-fine")
	if err := os.WriteFile(ok, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dirs := []string{open, mine}
	for name, want := range map[string]string{
		"open":  "is writable by every user",
		"loose": "the file is writable by every user",
	} {
		if _, err := Find("workload", name, dirs); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "not run") {
			t.Errorf("Find(%s) = %v, want a refusal containing %q", name, err, want)
		}
	}
	if p, err := Find("workload", "fine", dirs); err != nil || p != ok {
		t.Errorf("Find(fine) = %q, %v", p, err)
	}
}
