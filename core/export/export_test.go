package export

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/record"
)

func rec(i int) *record.Record {
	return &record.Record{RunID: "r", RequestID: fmt.Sprint("req", i), Seq: int64(i + 1), Success: i%2 == 0,
		TTFT: 0.25, Tags: map[string]string{"doc": fmt.Sprint(i)}, Phase: record.Measure}
}

type fakeExporter struct {
	mu       sync.Mutex
	writes   [][]*record.Record
	finished *record.Summary
	// gate, when set, holds the first Write until it is closed.
	gate  chan struct{}
	wrote chan struct{} // when set, gets a value after each Write
	fail  error
	// finishFail is Finish's error.
	finishFail error
}

func (f *fakeExporter) Write(_ context.Context, recs []*record.Record) error {
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.finished != nil {
		return errors.New("write after finish")
	}
	f.writes = append(f.writes, recs)
	if f.wrote != nil {
		f.wrote <- struct{}{}
	}
	return f.fail
}

func (f *fakeExporter) Finish(_ context.Context, s record.Summary) ([]File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finished = &s
	if f.finishFail != nil {
		return nil, f.finishFail
	}
	return []File{{Path: "x", Rows: 1}}, nil
}

func (f *fakeExporter) seqs() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []int64
	for _, w := range f.writes {
		for _, r := range w {
			ids = append(ids, r.Seq)
		}
	}
	return ids
}

func TestFanoutDeliversEverythingInOrderThenFinishes(t *testing.T) {
	t.Parallel()
	// The slow exporter is stuck in its first Write until every record was
	// added: Add must not wait for it (it would deadlock here if it did).
	gate := make(chan struct{})
	fast, slow := &fakeExporter{}, &fakeExporter{gate: gate}
	f := NewFanout([]Target{{Name: "fast", Exporter: fast}, {Name: "slow", Exporter: slow}},
		Options{BatchLen: 7, FlushEvery: time.Millisecond}, zerolog.Nop())
	const n = 100
	for i := range n {
		f.Add(rec(i))
	}
	close(gate)
	summary := record.Summary{RunID: "r", Total: n, Successful: n / 2, Failed: n / 2, Elapsed: 1.5}
	res := f.Finish(summary, time.Second)
	for i, e := range []*fakeExporter{fast, slow} {
		for _, w := range e.writes {
			if len(w) > 7 {
				t.Errorf("exporter %d: batch of %d > BatchLen", i, len(w))
			}
		}
		ids := e.seqs()
		if len(ids) != n {
			t.Fatalf("exporter %d got %d records", i, len(ids))
		}
		for k, id := range ids {
			if id != int64(k+1) {
				t.Fatalf("exporter %d: record %d has seq %d (out of order)", i, k, id)
			}
		}
		if e.finished == nil || res[i].Err != nil || len(res[i].Files) != 1 {
			t.Fatalf("exporter %d: finished=%v result=%+v", i, e.finished, res[i])
		}
		if d := cmp.Diff(summary, *e.finished); d != "" {
			t.Errorf("exporter %d: summary (-want +got):\n%s", i, d)
		}
	}
	if res[0].Name != "fast" || res[1].Name != "slow" {
		t.Errorf("result names %q, %q; want fast, slow (the targets' order)", res[0].Name, res[1].Name)
	}
}

// A partial batch is written on the timer, before Finish.
func TestFanoutFlushesAPartialBatch(t *testing.T) {
	t.Parallel()
	e := &fakeExporter{wrote: make(chan struct{}, 1)}
	f := NewFanout([]Target{{Name: "e", Exporter: e}}, Options{BatchLen: 1000, FlushEvery: time.Millisecond}, zerolog.Nop())
	f.Add(rec(0))
	f.Add(rec(1))
	select {
	case <-e.wrote:
	case <-time.After(time.Minute): // liveness only: the flush is due after a millisecond
		t.Fatal("a partial batch was never written before Finish")
	}
	f.Finish(record.Summary{}, time.Second)
	if d := cmp.Diff([]int64{1, 2}, e.seqs()); d != "" {
		t.Errorf("records written (-want +got):\n%s", d)
	}
}

// Batches stay under BatchBytes however many records BatchLen allows.
func TestFanoutSplitsBatchesBySize(t *testing.T) {
	t.Parallel()
	e := &fakeExporter{}
	f := NewFanout([]Target{{Name: "e", Exporter: e}}, Options{BatchLen: 1 << 20, FlushEvery: time.Hour}, zerolog.Nop())
	big := strings.Repeat("x", 3<<20) // three fit in no batch
	const n = 7
	for i := range n {
		r := rec(i)
		r.Error = big
		f.Add(r)
	}
	f.Finish(record.Summary{}, time.Second)
	if len(e.writes) < 4 {
		t.Errorf("%d records of 3 MiB in %d writes, want at least 4", n, len(e.writes))
	}
	for i, w := range e.writes {
		size := 0
		for _, r := range w {
			size += recordSize(r)
		}
		if size > BatchBytes {
			t.Errorf("write %d: %d bytes > BatchBytes", i, size)
		}
	}
	if got := len(e.seqs()); got != n {
		t.Errorf("%d records written, want %d", got, n)
	}
}

func TestFanoutFailingExporterIsReported(t *testing.T) {
	t.Parallel()
	diskFull := errors.New("disk full")
	bad := &fakeExporter{fail: diskFull}
	f := NewFanout([]Target{{Name: "bad", Exporter: bad}}, Options{BatchLen: 1}, zerolog.Nop())
	for i := range 3 {
		f.Add(rec(i))
	}
	res := f.Finish(record.Summary{}, time.Second)
	if res[0].Err == nil || bad.finished == nil {
		t.Fatalf("result %+v, finished %v", res[0], bad.finished)
	}
	if !errors.Is(res[0].Err, diskFull) || !strings.Contains(res[0].Err.Error(), "exporter bad: write") {
		t.Errorf("error %q does not name the exporter and the write, or lost its cause", res[0].Err)
	}
	// After a failure no more writes are attempted.
	if len(bad.writes) != 1 {
		t.Errorf("%d writes after the first failed, want none", len(bad.writes)-1)
	}
}

// Target.Wrap words the errors of both calls (the host names the plugin with it).
func TestFanoutWrap(t *testing.T) {
	t.Parallel()
	var ops []string
	wrap := func(op string, err error) error { ops = append(ops, op); return fmt.Errorf("wrapped %s: %w", op, err) }
	e := &fakeExporter{fail: errors.New("boom"), finishFail: errors.New("bang")}
	f := NewFanout([]Target{{Name: "e", Exporter: e, Wrap: wrap}}, Options{}, zerolog.Nop())
	f.Add(rec(0))
	res := f.Finish(record.Summary{}, time.Second)
	// The write's error is the one reported: it came first.
	if res[0].Err == nil || res[0].Err.Error() != "wrapped write: boom" {
		t.Errorf("error %v, want the Wrap's wording of the write", res[0].Err)
	}
	if d := cmp.Diff([]string{"write", "finish"}, ops); d != "" {
		t.Errorf("Wrap ops (-want +got):\n%s", d)
	}
	e = &fakeExporter{finishFail: errors.New("bang")}
	res = NewFanout([]Target{{Name: "e", Exporter: e}}, Options{}, zerolog.Nop()).Finish(record.Summary{}, time.Second)
	if res[0].Err == nil || res[0].Err.Error() != "exporter e: finish: bang" || res[0].Files != nil {
		t.Errorf("result %+v, want the finish error and no files", res[0])
	}
}

func TestFanoutFinishWithoutWrites(t *testing.T) {
	t.Parallel()
	e := &fakeExporter{}
	res := NewFanout([]Target{{Name: "e", Exporter: e}}, Options{}, zerolog.Nop()).Finish(record.Summary{}, time.Second)
	if res[0].Err != nil || len(e.writes) != 0 || e.finished == nil {
		t.Fatalf("%+v", res[0])
	}
}

func TestFanoutWithoutTargets(t *testing.T) {
	t.Parallel()
	f := NewFanout(nil, Options{}, zerolog.Nop())
	f.Add(rec(0))
	if res := f.Finish(record.Summary{}, time.Second); len(res) != 0 {
		t.Errorf("results %+v, want none", res)
	}
}
