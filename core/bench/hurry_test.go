package bench

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// A second Ctrl-C (Plan.Hurry) ends the drain at once, long before the
// drain timeout: the hung requests are recorded failed and every file is
// still written from them.
func TestHurryCancelsInFlightAndWritesFiles(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 3)
	snd := &funcSender{answer: func(ctx context.Context, _ int, req engine.Request) engine.Result {
		r := fail(req, "")
		started <- struct{}{}
		<-ctx.Done()
		r.Finish, r.Error = time.Now(), ctx.Err().Error()
		return r
	}}
	measure := []protocol.Request{chat("m0", nil), chat("m1", nil), chat("m2", nil)}
	exp := &fakeExporter{}
	p, _ := plan(t, batches(nil, measure), snd, exp)
	p.DrainTimeout = time.Hour // only Hurry can end the drain
	hurry := make(chan struct{})
	p.Hurry = hurry
	p.Report.ExportJSON = true
	draining := &signalWriter{match: "waiting for in-flight requests", seen: make(chan struct{})}
	p.Log = zerolog.New(draining)
	ctx, interrupt := context.WithCancel(context.Background())
	go func() {
		for range 3 {
			<-started
		}
		interrupt() // the first Ctrl-C: drain
		<-draining.seen
		close(hurry) // the second
	}()
	res, err := Execute(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != record.Interrupted {
		t.Errorf("status %q, want interrupted", res.Status)
	}
	recs := readJournal(t, p).Records
	if len(recs) != 3 {
		t.Fatalf("journal has %d records, want 3", len(recs))
	}
	for _, r := range recs {
		if r.Success || r.Error != context.Canceled.Error() {
			t.Errorf("record %s: success %v error %q, want failed, cancelled", r.RequestID, r.Success, r.Error)
		}
	}
	if len(exp.records) != 3 || exp.summary == nil || exp.summary.Status != record.Interrupted {
		t.Errorf("exporter got %d records, summary given %v", len(exp.records), exp.summary != nil)
	}
	if sr := readSummaryRun(t, p); sr.Status != "interrupted" || sr.Finished != 3 {
		t.Errorf("summary run block %+v", sr)
	}
}

// signalWriter closes seen once a log line holding match is written.
type signalWriter struct {
	match string
	seen  chan struct{}
	once  sync.Once
}

func (w *signalWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(w.match)) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}
