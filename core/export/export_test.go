package export

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/testing/protocmp"

	exporterv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/exporter/v1"
)

func rec(i int) *exporterv1.Record {
	return &exporterv1.Record{RunId: "r", RequestId: fmt.Sprint("req", i), Seq: int64(i + 1), Success: i%2 == 0,
		TtftS: 0.25, Tags: map[string]string{"doc": fmt.Sprint(i)}, Phase: exporterv1.Phase_PHASE_MEASURE}
}

func TestJournalRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "j.jsonl")
	meta := &exporterv1.RunMetadata{RunId: "r", Workload: "long-doc-qa", TagKeys: []string{"doc"}}
	j, err := CreateJournal(path, meta)
	if err != nil {
		t.Fatal(err)
	}
	var want []*exporterv1.Record
	for i := range 10 {
		want = append(want, rec(i))
		if err := j.Append(rec(i)); err != nil {
			t.Fatal(err)
		}
		if err := j.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	// Readable before Close: a killed host leaves exactly this.
	gotMeta, got, err := ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(meta, gotMeta, protocmp.Transform()); d != "" {
		t.Errorf("meta (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, got, protocmp.Transform()); d != "" {
		t.Errorf("records (-want +got):\n%s", d)
	}
	if err := j.Close(&exporterv1.Summary{RunId: "r", TotalRequests: 10}); err != nil {
		t.Fatal(err)
	}
	if _, got, err = ReadJournal(path); err != nil || len(got) != 10 {
		t.Fatalf("after close: %d records, %v", len(got), err)
	}
}

func TestJournalTornLastLineIsIgnored(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := CreateJournal(path, &exporterv1.RunMetadata{RunId: "r"})
	if err != nil {
		t.Fatal(err)
	}
	j.Append(rec(0), rec(1))
	j.Flush()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"kind":"request","record":{"run_id":"r","requ`)
	f.Close()
	_, got, err := ReadJournal(path)
	if err != nil || len(got) != 2 {
		t.Fatalf("got %d records, %v", len(got), err)
	}
}

func TestReadJournalRejectsOtherFiles(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(path, []byte("{\"kind\":\"request\",\"record\":{}}\n"), 0o644)
	if _, _, err := ReadJournal(path); err == nil {
		t.Fatal("a file without a run header was accepted")
	}
}

type fakeExporter struct {
	mu       sync.Mutex
	writes   [][]*exporterv1.Record
	finished *exporterv1.Summary
	delay    time.Duration
	fail     error
}

func (f *fakeExporter) Write(_ context.Context, r *exporterv1.WriteRequest) (*exporterv1.WriteResponse, error) {
	time.Sleep(f.delay)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.finished != nil {
		return nil, errors.New("write after finish")
	}
	f.writes = append(f.writes, r.Records)
	return &exporterv1.WriteResponse{}, f.fail
}

func (f *fakeExporter) Finish(_ context.Context, r *exporterv1.FinishRequest) (*exporterv1.FinishResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finished = r.Summary
	return &exporterv1.FinishResponse{Files: []*exporterv1.WrittenFile{{Path: "x", Rows: 1}}}, nil
}

func TestFanoutDeliversEverythingInOrderThenFinishes(t *testing.T) {
	t.Parallel()
	fast, slow := &fakeExporter{}, &fakeExporter{delay: 5 * time.Millisecond}
	f := NewFanout([]Target{{Name: "fast", Exporter: fast}, {Name: "slow", Exporter: slow}},
		Options{BatchLen: 7, FlushEvery: time.Millisecond}, zerolog.Nop())
	const n = 100
	start := time.Now()
	for i := range n {
		f.Add(rec(i))
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Add blocked for %v behind a slow exporter", d)
	}
	res := f.Finish(&exporterv1.Summary{RunId: "r"}, time.Second)
	for i, e := range []*fakeExporter{fast, slow} {
		var ids []int64
		for _, w := range e.writes {
			if len(w) > 7 {
				t.Errorf("batch of %d > BatchLen", len(w))
			}
			for _, r := range w {
				ids = append(ids, r.Seq)
			}
		}
		if len(ids) != n {
			t.Fatalf("exporter %d got %d records", i, len(ids))
		}
		for k, id := range ids {
			if id != int64(k+1) {
				t.Fatalf("exporter %d: record %d has seq %d (out of order)", i, k, id)
			}
		}
		if e.finished == nil || res[i].Err != nil || len(res[i].Files) != 1 {
			t.Errorf("exporter %d: finished=%v result=%+v", i, e.finished, res[i])
		}
	}
}

func TestFanoutFailingExporterIsReported(t *testing.T) {
	t.Parallel()
	bad := &fakeExporter{fail: errors.New("disk full")}
	f := NewFanout([]Target{{Name: "bad", Exporter: bad}}, Options{}, zerolog.Nop())
	f.Add(rec(0))
	res := f.Finish(&exporterv1.Summary{}, time.Second)
	if res[0].Err == nil || bad.finished == nil {
		t.Fatalf("result %+v, finished %v", res[0], bad.finished)
	}
}

func TestFanoutFinishWithoutWrites(t *testing.T) {
	t.Parallel()
	e := &fakeExporter{}
	res := NewFanout([]Target{{Name: "e", Exporter: e}}, Options{}, zerolog.Nop()).Finish(&exporterv1.Summary{}, time.Second)
	if res[0].Err != nil || len(e.writes) != 0 || e.finished == nil {
		t.Fatalf("%+v", res[0])
	}
}
