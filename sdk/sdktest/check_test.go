package sdktest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/exporter"
	"github.com/lmbench/lmbench/sdk/sdktest"
)

func TestCheckWorkload(t *testing.T) {
	t.Parallel()
	sdktest.CheckWorkload(t, richDef(), sdktest.Options{})
}

type jsonlOptions struct {
	File string `opt:"file" help:"File to write, relative to the output directory."`
}

// jsonl writes one JSON object per record and closes the file in Finish.
type jsonl struct {
	f    *os.File
	enc  *json.Encoder
	rows int64
}

func (e *jsonl) Write(_ context.Context, recs []exporter.Record) error {
	for _, r := range recs {
		if err := e.enc.Encode(r); err != nil {
			return err
		}
		e.rows++
	}
	return nil
}

func (e *jsonl) Finish(context.Context, exporter.Summary) ([]exporter.File, error) {
	return []exporter.File{{Path: e.f.Name(), Rows: e.rows, Description: "records"}}, e.f.Close()
}

var jsonlDef = exporter.Definition[jsonlOptions]{
	Name: "jsonl", Prefix: "jsonl", Summary: "Records as JSON lines",
	Defaults: jsonlOptions{File: "records.jsonl"},
	New: func(o jsonlOptions, env exporter.Env) (exporter.Exporter, error) {
		f, err := os.Create(filepath.Join(env.Run.OutputDir, o.File))
		if err != nil {
			return nil, err
		}
		return &jsonl{f: f, enc: json.NewEncoder(f)}, nil
	},
}

func TestCheckExporter(t *testing.T) {
	t.Parallel()
	sdktest.CheckExporter(t, jsonlDef, nil, exporter.RunMetadata{TagKeys: []string{"doc"}})
}

func TestRunExporter(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recs := []exporter.Record{
		{RequestID: "q0", Phase: exporter.Measure, Success: true, Submit: time.Unix(1700000000, 0).UTC()},
		{RequestID: "q1", Phase: exporter.Measure, TTFT: -1},
	}
	files, err := sdktest.RunExporter(t, jsonlDef, map[string]any{"file": "out.jsonl"},
		exporter.RunMetadata{OutputDir: dir}, [][]exporter.Record{recs[:1], recs[1:]}, exporter.Summary{Total: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := []exporter.File{{Path: filepath.Join(dir, "out.jsonl"), Rows: 2, Description: "records"}}
	if d := cmp.Diff(want, files); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	b, err := os.ReadFile(filepath.Join(dir, "out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var got []exporter.Record
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var r exporter.Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if d := cmp.Diff(recs, got); d != "" {
		t.Errorf("records written (-want +got):\n%s", d)
	}
}

func TestRunExporterConfigError(t *testing.T) {
	t.Parallel()
	_, err := sdktest.RunExporter(t, jsonlDef, map[string]any{"file": 3}, exporter.RunMetadata{}, nil, exporter.Summary{})
	var ce *sdktest.ConfigError
	if !errors.As(err, &ce) || ce.Error() != "file: expected a string, got 3" {
		t.Errorf("error = %v, want a *ConfigError about file", err)
	}
}
