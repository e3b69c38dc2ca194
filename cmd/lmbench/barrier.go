package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/barrier"
	"github.com/lmbench/lmbench/core/bench"
)

// barrierFlags are lmbench barrier's flags.
type barrierFlags struct {
	shards  int
	listen  string
	runID   string
	lead    time.Duration
	timeout time.Duration
	help    bool
}

func (f *barrierFlags) register(fs *pflag.FlagSet) {
	fs.IntVar(&f.shards, "shards", 0, "Number of shards to wait for (the N of their --shard I/N). Required.")
	fs.StringVar(&f.listen, "listen", ":7070", "Address to listen on (host:port; port 0 picks a free one, printed).")
	fs.StringVar(&f.runID, "run-id", "", "The run's id, which every shard records (default: one made from the time now).")
	fs.DurationVar(&f.lead, "lead", 5*time.Second, "How long after the last shard joins the run starts: time for every answer to arrive.")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Minute, "Give up when not every shard has joined by then (exit 1, naming the missing shards).")
	fs.BoolVarP(&f.help, "help", "h", false, "Show help.")
	fs.SortFlags = false
}

const barrierUsage = `Usage: lmbench barrier --shards N [--listen ADDR] [flags]

Give the shards of a sharded run one start and one clock. Each shard, run
with --barrier URL, first reads the barrier's clock a few times (its
offset, from the fastest round trip, is recorded in its journal and used
by lmbench merge), then joins; when all N have joined, every shard is
answered the same start time, Lead from then, and the run id. After its
warmup each shard joins again, and the measured phases start together
(at most a second after the last arrives), so the shards' schedules do.
The barrier exits 0 once every shard has started its measured phase, and
1 when one stopped before (every shard waiting is told why) or --timeout
passed.

Flags:
`

// cmdBarrier is lmbench barrier.
func cmdBarrier(args []string, stdout io.Writer) error {
	var f barrierFlags
	fs := pflag.NewFlagSet("lmbench barrier", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if f.help {
		fmt.Fprint(stdout, barrierUsage)
		fmt.Fprint(stdout, fs.FlagUsagesWrapped(100))
		return nil
	}
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Errorf("unexpected argument %q (flags start with --)", fs.Arg(0))}
	case f.shards < 1:
		return usageError{fmt.Errorf("--shards %d: expected the number of shards, at least 1", f.shards)}
	case f.lead < 0 || f.timeout <= 0:
		return usageError{fmt.Errorf("--lead %s, --timeout %s: expected a lead of 0 or more and a positive timeout", f.lead, f.timeout)}
	}
	if f.runID == "" {
		f.runID = bench.NewRunID(time.Now())
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", f.listen, err)
	}
	srv := barrier.NewServer(f.shards, f.runID, f.lead)
	srv.OnJoin = func(jr barrier.JoinRequest, n int) {
		fmt.Fprintf(stdout, "lmbench barrier: shard %d/%d at the %s gate, from %s (%d of %d)\n", jr.Index, jr.Count, jr.Phase, jr.Host, n, f.shards)
	}
	srv.OnLeave = func(jr barrier.JoinRequest) {
		fmt.Fprintf(stdout, "lmbench barrier: shard %d/%d stopped before its measured phase: %s\n", jr.Index, jr.Count, jr.Reason)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	fmt.Fprintf(stdout, "lmbench barrier: run %s, waiting for %d shards on http://%s\n", f.runID, f.shards, ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	timer := time.NewTimer(f.timeout)
	defer timer.Stop()
	var failure error
	select {
	case <-srv.Done():
		if why := srv.Err(); why != "" {
			failure = errors.New(why)
			break
		}
		fmt.Fprintf(stdout, "lmbench barrier: all %d shards reached their measured phase; run %s is under way\n", f.shards, f.runID)
	case <-timer.C:
		failure = fmt.Errorf("--timeout %s: %d of %d shards joined: %w", f.timeout, srv.Joined(), f.shards, barrier.ErrTimeout)
	case <-ctx.Done():
		failure = errors.New("interrupted before every shard joined")
	}
	// Let the last answers finish writing.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	return failure
}
