package export

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"

	"github.com/lmbench/lmbench/sdk/handshake"
	exporterv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/exporter/v1"
)

// Exporter is the part of the exporter protocol the fan-out uses.
type Exporter interface {
	Write(ctx context.Context, req *exporterv1.WriteRequest) (*exporterv1.WriteResponse, error)
	Finish(ctx context.Context, req *exporterv1.FinishRequest) (*exporterv1.FinishResponse, error)
}

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
type Fanout struct {
	queues []*queue
	log    zerolog.Logger
}

type queue struct {
	t       Target
	opts    Options
	ch      chan *exporterv1.Record
	done    chan struct{}
	mu      sync.Mutex
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
		q := &queue{t: t, opts: opts, ch: make(chan *exporterv1.Record, opts.QueueLen), done: make(chan struct{})}
		f.queues = append(f.queues, q)
		go q.run(log.With().Str("exporter", t.Name).Logger())
	}
	return f
}

// Add queues a record for every exporter.
func (f *Fanout) Add(r *exporterv1.Record) {
	for _, q := range f.queues {
		q.ch <- r
	}
}

func (q *queue) wrap(op string, err error) error {
	if q.t.Wrap != nil {
		return q.t.Wrap(op, err)
	}
	return fmt.Errorf("exporter %s: %s: %w", q.t.Name, op, err)
}

func (q *queue) run(log zerolog.Logger) {
	defer close(q.done)
	var (
		batch []*exporterv1.Record
		bytes int
		tick  = time.NewTicker(q.opts.FlushEvery)
	)
	defer tick.Stop()
	flush := func() {
		if len(batch) == 0 {
			return
		}
		q.mu.Lock()
		failed := q.err != nil
		q.mu.Unlock()
		if !failed {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			_, err := q.t.Exporter.Write(ctx, &exporterv1.WriteRequest{Records: batch})
			cancel()
			if err != nil {
				err = q.wrap("write", err)
				log.Error().Err(err).Msg("exporter failed; its output will be incomplete (the journal has every record)")
				q.mu.Lock()
				q.err = err
				q.mu.Unlock()
			} else {
				q.written += int64(len(batch))
			}
		}
		batch, bytes = batch[:0:0], 0
	}
	for {
		select {
		case r, ok := <-q.ch:
			if !ok {
				flush()
				return
			}
			size := proto.Size(r)
			if bytes+size > handshake.BatchBytes {
				flush()
			}
			batch = append(batch, r)
			bytes += size
			if len(batch) >= q.opts.BatchLen {
				flush()
			}
		case <-tick.C:
			flush()
		}
	}
}

// Result of finishing one exporter.
type Result struct {
	Name  string
	Files []*exporterv1.WrittenFile
	Err   error
}

// Finish drains every queue, then calls Finish on each exporter (in
// parallel, each bounded by timeout). Call it exactly once, after the last Add.
func (f *Fanout) Finish(summary *exporterv1.Summary, timeout time.Duration) []Result {
	out := make([]Result, len(f.queues))
	var wg sync.WaitGroup
	for i, q := range f.queues {
		wg.Add(1)
		go func() {
			defer wg.Done()
			close(q.ch)
			<-q.done
			out[i] = Result{Name: q.t.Name}
			q.mu.Lock()
			werr := q.err
			q.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			resp, err := q.t.Exporter.Finish(ctx, &exporterv1.FinishRequest{Summary: summary})
			if err != nil {
				out[i].Err = q.wrap("finish", err)
			} else {
				out[i].Files = resp.GetFiles()
			}
			if werr != nil {
				out[i].Err = werr
			}
		}()
	}
	wg.Wait()
	return out
}
