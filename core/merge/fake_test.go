package merge

import (
	"context"
	"errors"
	"sync"

	"github.com/lmbench/lmbench/core/export"
	"github.com/lmbench/lmbench/core/record"
)

// fakeExporter is an exporter, and the Exporters that configure it, that
// keeps what it was given.
type fakeExporter struct {
	mu      sync.Mutex
	run     record.Run
	records []*record.Record
	summary *record.Summary
	events  []string // "configure", "write", "finish" in call order
}

func (f *fakeExporter) Configure(_ context.Context, run record.Run) ([]export.Target, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.run = run
	f.events = append(f.events, "configure")
	return []export.Target{{Name: "fake", Exporter: f}}, nil
}

// Write keeps recs; a write after Finish is an error, as for a plugin.
func (f *fakeExporter) Write(_ context.Context, recs []*record.Record) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, "write")
	f.records = append(f.records, recs...)
	if f.summary != nil {
		return errors.New("write after finish")
	}
	return nil
}

// Finish keeps the summary and reports one file of every record.
func (f *fakeExporter) Finish(_ context.Context, s record.Summary) ([]export.File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events, f.summary = append(f.events, "finish"), &s
	return []export.File{{Path: "fake.csv", Rows: int64(len(f.records))}}, nil
}
