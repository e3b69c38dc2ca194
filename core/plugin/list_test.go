package plugin

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// List shows what each binary's describe said, and "?" for one that
// cannot answer.
func TestList(t *testing.T) {
	skipOnWindows(t)
	dir := t.TempDir()
	script := "#!/bin/sh\n[ \"$1\" = describe ] && echo '{\"info\":{\"kind\":\"workload\",\"name\":\"good\",\"prefix\":\"g\",\"version\":\"1.2.3\",\"protocolMinor\":5}}'\n"
	if err := os.WriteFile(filepath.Join(dir, "lmbench-workload-good"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	touch(t, dir, "lmbench-exporter-mute", 0o755) // answers nothing
	var got [][3]string
	for _, l := range List([]string{dir}) {
		got = append(got, [3]string{l.Kind + "/" + l.Name, l.Version, l.Protocol})
	}
	want := [][3]string{{"exporter/mute", "?", "?"}, {"workload/good", "1.2.3", "v1.5"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("List (-want +got):\n%s", d)
	}
}

// Names are the plugins of a kind on LMBENCH_PLUGIN_PATH.
func TestNames(t *testing.T) {
	skipOnWindows(t)
	dir := t.TempDir()
	touch(t, dir, "lmbench-workload-a", 0o755)
	touch(t, dir, "lmbench-workload-b", 0o755)
	touch(t, dir, "lmbench-exporter-c", 0o755)
	t.Setenv("LMBENCH_PLUGIN_PATH", dir)
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	got := Names("workload")
	if !slices.Contains(got, "a") || !slices.Contains(got, "b") || slices.Contains(got, "c") {
		t.Errorf("Names(workload) = %q, want a and b, not the exporter c", got)
	}
}
