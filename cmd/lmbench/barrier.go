package main

import (
	"fmt"
	"net"
	"time"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/barrier"
	"github.com/lmbench/lmbench/core/bench"
)

func registerBarrier(f *barrier.Config) func(*pflag.FlagSet) {
	return func(fs *pflag.FlagSet) {
		fs.IntVar(&f.Shards, "shards", 0, "Number of shards to wait for (the N of their --shard I/N). Required.")
		fs.StringVar(&f.Listen, "listen", ":7070", "Address to listen on (host:port; port 0 picks a free one, printed).")
		fs.StringVar(&f.RunID, "run-id", "", "The run's id, which every shard records (default: one made from the time now).")
		fs.DurationVar(&f.Lead, "lead", 5*time.Second, "How long after the last shard joins the run starts: time for every answer to arrive.")
		fs.DurationVar(&f.Timeout, "timeout", 30*time.Minute, "Give up when not every shard has joined by then (exit 1, naming the missing shards).")
	}
}

// cmdBarrier is lmbench barrier (core/barrier's Serve).
func cmdBarrier(c *cli, args []string) error {
	var f barrier.Config
	if err := c.parseFlagsOnly(args, registerBarrier(&f)); err != nil {
		return err
	}
	if err := f.Check(); err != nil {
		return usageError{err}
	}
	if f.RunID == "" {
		f.RunID = bench.NewRunID(time.Now())
	}
	f.OnListen = func(addr net.Addr) {
		fmt.Fprintf(c.stdout, "lmbench barrier: run %s, waiting for %d shards on http://%s\n", f.RunID, f.Shards, addr)
	}
	f.OnJoin = func(jr barrier.JoinRequest, n int) {
		fmt.Fprintf(c.stdout, "lmbench barrier: shard %d/%d at the %s gate, from %s (%d of %d)\n", jr.Index, jr.Count, jr.Phase, jr.Host, n, f.Shards)
	}
	f.OnLeave = func(jr barrier.JoinRequest) {
		fmt.Fprintf(c.stdout, "lmbench barrier: shard %d/%d stopped before its measured phase: %s\n", jr.Index, jr.Count, jr.Reason)
	}
	ctx, stop := untilSignal()
	defer stop()
	if err := f.Serve(ctx); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "lmbench barrier: all %d shards reached their measured phase; run %s is under way\n", f.Shards, f.RunID)
	return nil
}
