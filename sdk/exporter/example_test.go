package exporter_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/exporter"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// LinesOptions are the example exporter's options: --lines-file.
type LinesOptions struct {
	File string `opt:"file" help:"Output file, relative to the output directory."`
}

// lines writes one line per measured request.
type lines struct {
	f    *os.File
	path string
	rows int64
}

func (l *lines) Write(_ context.Context, recs []exporter.Record) error {
	for _, r := range recs {
		if r.Phase != exporter.Measure {
			continue
		}
		fmt.Fprintf(l.f, "%s success=%v ttft=%.3fs\n", r.RequestID, r.Success, r.TTFT)
		l.rows++
	}
	return l.f.Sync() // durable as it goes: a killed run keeps what was written
}

func (l *lines) Finish(context.Context, exporter.Summary) ([]exporter.File, error) {
	return []exporter.File{{Path: l.path, Rows: l.rows}}, l.f.Close()
}

var linesDefinition = exporter.Definition[LinesOptions]{
	Name: "lines", Prefix: "lines", Summary: "One line per measured request", Version: "0.1.0",
	Defaults: LinesOptions{File: "results.txt"},
	New: func(o LinesOptions, env exporter.Env) (exporter.Exporter, error) {
		path := filepath.Join(env.Run.OutputDir, o.File)
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		return &lines{f: f, path: path}, nil
	},
}

// An exporter is a Definition whose New builds an Exporter: Write is
// called with batches of finished requests while the run goes, Finish once
// at the end. main would call exporter.Serve(linesDefinition); here the
// protocol server is driven by hand, as lmbench drives it.
func ExampleDefinition() {
	dir, _ := os.MkdirTemp("", "lines")
	defer os.RemoveAll(dir)
	srv := exporter.NewServer(linesDefinition, zerolog.Nop())
	ctx := context.Background()
	if _, err := srv.Configure(ctx, protocol.ExporterConfig{Run: exporter.RunMetadata{RunID: "r1", OutputDir: dir}}); err != nil {
		panic(err)
	}
	start := time.Unix(1700000000, 0)
	srv.Write(ctx, []exporter.Record{
		{Phase: exporter.Warmup, RequestID: "warmup_0", Success: true, TTFT: 0.1, Submit: start},
		{Phase: exporter.Measure, RequestID: "q0", Success: true, TTFT: 0.25, Submit: start},
		{Phase: exporter.Measure, RequestID: "q1", Error: "HTTP 500", TTFT: -1, Submit: start},
	})
	files, _ := srv.Finish(ctx, exporter.Summary{RunID: "r1", Total: 2, Successful: 1, Failed: 1})
	b, _ := os.ReadFile(files[0].Path)
	fmt.Printf("%s, %d rows:\n%s", filepath.Base(files[0].Path), files[0].Rows, b)
	// Output:
	// results.txt, 2 rows:
	// q0 success=true ttft=0.250s
	// q1 success=false ttft=-1.000s
}
