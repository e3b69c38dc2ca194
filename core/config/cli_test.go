package config

import (
	"strings"
	"testing"
)

// A point's values are its run's with the overrides on top, as flags:
// the run's own values stay as they were.
func TestValuesWith(t *testing.T) {
	t.Parallel()
	r := NewRunRegistry()
	v, err := r.Load(Sources{Environ: []string{"LMBENCH_OUTPUT_DIR=/runs"}, Flags: flags(t, r, "--seed", "7"), Partial: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.With(map[string]any{KeyOutputDir: "/runs/point-01", KeyJSON: true, "seed": "9"})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.String(KeyOutputDir); got != "/runs/point-01" || !p.Bool(KeyJSON) || p.Int("seed") != 9 {
		t.Errorf("point: output_dir %q, json %v, seed %d; want /runs/point-01, true, 9", got, p.Bool(KeyJSON), p.Int("seed"))
	}
	if o := p.Origin(KeyOutputDir); o != "--output-dir" {
		t.Errorf("override's origin %q, want --output-dir", o)
	}
	if v.String(KeyOutputDir) != "/runs" || v.Bool(KeyJSON) || v.Int("seed") != 7 || v.Origin(KeyOutputDir) != "LMBENCH_OUTPUT_DIR" {
		t.Errorf("the run's values changed: output_dir %q (%s), json %v, seed %d", v.String(KeyOutputDir), v.Origin(KeyOutputDir), v.Bool(KeyJSON), v.Int("seed"))
	}
	if _, err := v.With(map[string]any{"no_such_key": 1}); err == nil || !strings.Contains(err.Error(), `unknown config key "no_such_key"`) {
		t.Errorf("unknown key: %v", err)
	}
	if _, err := v.With(map[string]any{"seed": "1.5"}); err == nil || !strings.Contains(err.Error(), "--seed: expected") {
		t.Errorf("bad value: %v", err)
	}
}

// lmbench run's flag set holds the command-line-only flags beside the
// registry's options.
func TestRunFlagSet(t *testing.T) {
	t.Parallel()
	var f RunFlags
	fs := RunFlagSet(NewRunRegistry(), &f)
	if err := fs.Parse([]string{"--exporter", "parquet", "--exporter", "csv", "--no-interactive", "--export-config", "x.yaml", "--seed", "3"}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(f.Exporters, ",") != "parquet,csv" || !f.NoInteractive || f.ExportConfig != "x.yaml" || f.Help {
		t.Errorf("flags %+v", f)
	}
	if err := CheckExportPath("x.ini"); err == nil || !strings.Contains(err.Error(), `--export-config x.ini: unknown file type ".ini"`) {
		t.Errorf("CheckExportPath(x.ini) = %v", err)
	}
}

// A hidden option is a flag like the others, left out of the usage text.
func TestHiddenOption(t *testing.T) {
	t.Parallel()
	r := NewRunRegistry([]Option{{Key: "hush", Type: tBool, Hidden: true, Help: "Hidden."}})
	var f RunFlags
	fs := RunFlagSet(r, &f)
	if err := fs.Parse([]string{"--hush"}); err != nil {
		t.Fatal(err)
	}
	if fl := fs.Lookup("hush"); fl == nil || !fl.Hidden || fl.Value.String() != "true" {
		t.Errorf("--hush: %+v", fl)
	}
	if strings.Contains(fs.FlagUsages(), "--hush") {
		t.Error("the hidden flag is in the usage text")
	}
}
