package barrier

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Config is lmbench barrier: a Server for Shards shards of run RunID,
// listening on Listen.
type Config struct {
	Shards int
	Listen string // host:port; port 0 picks a free one
	RunID  string
	// Lead is the Server's; Timeout is how long the shards have to join.
	Lead, Timeout time.Duration
	// OnListen hears the address once the barrier listens; OnJoin and
	// OnLeave are the Server's.
	OnListen func(addr net.Addr)
	OnJoin   func(jr JoinRequest, joined int)
	OnLeave  func(jr JoinRequest)
}

// Check says what is wrong with c, naming the flag, before anything
// listens.
func (c Config) Check() error {
	switch {
	case c.Shards < 1:
		return fmt.Errorf("--shards %d: expected the number of shards, at least 1", c.Shards)
	case c.Lead < 0 || c.Timeout <= 0:
		return fmt.Errorf("--lead %s, --timeout %s: expected a lead of 0 or more and a positive timeout", c.Lead, c.Timeout)
	}
	return nil
}

// Serve runs the barrier until every shard has started its measured
// phase (nil), one stopped before it (the error is its reason), Timeout
// passed (ErrTimeout) or ctx ended. The last answers are let finish
// before it returns.
func (c Config) Serve(ctx context.Context) error {
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", c.Listen, err)
	}
	srv := NewServer(c.Shards, c.RunID, c.Lead)
	srv.OnJoin, srv.OnLeave = c.OnJoin, c.OnLeave
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	if c.OnListen != nil {
		c.OnListen(ln.Addr())
	}
	timer := time.NewTimer(c.Timeout)
	defer timer.Stop()
	var failure error
	select {
	case <-srv.Done():
		if why := srv.Err(); why != "" {
			failure = errors.New(why)
		}
	case <-timer.C:
		failure = fmt.Errorf("--timeout %s: %d of %d shards joined: %w", c.Timeout, srv.Joined(), c.Shards, ErrTimeout)
	case <-ctx.Done():
		failure = errors.New("interrupted before every shard joined")
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	return failure
}
