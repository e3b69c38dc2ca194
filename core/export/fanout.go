package export

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/record"
)

// Exporter is what the fan-out feeds: a configured exporter plugin
// (core/plugin adapts one), or a fake in tests.
type Exporter interface {
	Write(ctx context.Context, records []*record.Record) error
	Finish(ctx context.Context, summary record.Summary) ([]File, error)
}

// File is a file an exporter wrote.
type File struct {
	Path        string
	Rows        int64
	Description string
}

// BatchBytes caps the records of one Write (well below the plugin
// protocol's message limit).
const BatchBytes = 8 << 20

// Target is one exporter to feed.
type Target struct {
	Name     string
	Exporter Exporter
	// Wrap turns an RPC error into a readable one (optional).
	Wrap func(op string, err error) error
}

// Options tune the fan-out.
type Options struct {
	QueueLen   int           // records buffered per exporter (default 65536)
	BatchLen   int           // records per Write at most (default 1024)
	FlushEvery time.Duration // a partial batch is written after this (default 200 ms)
}

// Fanout feeds records to every exporter from its own goroutine. Add
// blocks only when an exporter's queue is full (backpressure, never loss).
// Add does not wake the exporter's goroutine for each record: it wakes
// when a batch is full, at FlushEvery, and at Finish, so the host's run
// loop (which calls Add as each request finishes) does not hand the CPU
// to an exporter between a finish and the next send.
type Fanout struct {
	queues []*queue
	log    zerolog.Logger
}

type queue struct {
	t    Target
	opts Options
	done chan struct{}
	kick chan struct{} // a full batch is waiting (buffered: one kick pending)

	mu      sync.Mutex
	room    *sync.Cond // signalled when the goroutine takes records
	buf     []*record.Record
	closed  bool
	err     error
	written int64
}

// NewFanout starts one writer goroutine per target.
func NewFanout(targets []Target, opts Options, log zerolog.Logger) *Fanout {
	if opts.QueueLen == 0 {
		opts.QueueLen = 65536
	}
	if opts.BatchLen == 0 {
		opts.BatchLen = 1024
	}
	if opts.FlushEvery == 0 {
		opts.FlushEvery = 200 * time.Millisecond
	}
	f := &Fanout{log: log}
	for _, t := range targets {
		q := &queue{t: t, opts: opts, done: make(chan struct{}), kick: make(chan struct{}, 1)}
		q.room = sync.NewCond(&q.mu)
		f.queues = append(f.queues, q)
		go q.run(log.With().Str("exporter", t.Name).Logger())
	}
	return f
}

// Add queues a record for every exporter.
func (f *Fanout) Add(r *record.Record) {
	for _, q := range f.queues {
		q.add(r)
	}
}

func (q *queue) add(r *record.Record) {
	q.mu.Lock()
	for len(q.buf) >= q.opts.QueueLen {
		q.room.Wait()
	}
	q.buf = append(q.buf, r)
	full := len(q.buf) >= q.opts.BatchLen
	q.mu.Unlock()
	if full {
		select {
		case q.kick <- struct{}{}:
		default:
		}
	}
}

func (q *queue) wrap(op string, err error) error {
	if q.t.Wrap != nil {
		return q.t.Wrap(op, err)
	}
	return fmt.Errorf("exporter %s: %s: %w", q.t.Name, op, err)
}

// take returns the queued records and whether Finish has closed the queue.
func (q *queue) take() ([]*record.Record, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	recs, closed := q.buf, q.closed
	q.buf = nil
	q.room.Broadcast()
	return recs, closed
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

func (q *queue) run(log zerolog.Logger) {
	defer close(q.done)
	tick := time.NewTicker(q.opts.FlushEvery)
	defer tick.Stop()
	write := func(batch []*record.Record) {
		q.mu.Lock()
		failed := q.err != nil
		q.mu.Unlock()
		if failed {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err := q.t.Exporter.Write(ctx, batch)
		cancel()
		if err != nil {
			err = q.wrap("write", err)
			log.Error().Err(err).Msg("exporter failed; its output will be incomplete (the journal has every record)")
			q.mu.Lock()
			q.err = err
			q.mu.Unlock()
			return
		}
		q.written += int64(len(batch))
	}
	for {
		select {
		case <-q.kick:
		case <-tick.C:
		}
		recs, closed := q.take()
		// Batches of at most BatchLen records and BatchBytes bytes.
		for len(recs) > 0 {
			n, bytes := 0, 0
			for n < len(recs) && n < q.opts.BatchLen {
				size := recordSize(recs[n])
				if n > 0 && bytes+size > BatchBytes {
					break
				}
				bytes += size
				n++
			}
			write(recs[:n])
			recs = recs[n:]
		}
		if closed {
			return
		}
	}
}

// Result of finishing one exporter.
type Result struct {
	Name  string
	Files []File
	Err   error
}

// Finish drains every queue, then calls Finish on each exporter (in
// parallel, each bounded by timeout). Call it exactly once, after the last Add.
func (f *Fanout) Finish(summary record.Summary, timeout time.Duration) []Result {
	out := make([]Result, len(f.queues))
	var wg sync.WaitGroup
	for i, q := range f.queues {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q.close()
			<-q.done
			out[i] = Result{Name: q.t.Name}
			q.mu.Lock()
			werr := q.err
			q.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			files, err := q.t.Exporter.Finish(ctx, summary)
			if err != nil {
				out[i].Err = q.wrap("finish", err)
			} else {
				out[i].Files = files
			}
			if werr != nil {
				out[i].Err = werr
			}
		}()
	}
	wg.Wait()
	return out
}

// recordSize estimates a record's size on the wire.
func recordSize(r *record.Record) int {
	n := len(r.RunID) + len(r.Workload) + len(r.RequestID) + len(r.Error) + 160
	for k, v := range r.Tags {
		n += len(k) + len(v) + 8
	}
	return n
}
