package barrier

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestConfigCheck(t *testing.T) {
	t.Parallel()
	ok := Config{Shards: 2, Lead: time.Second, Timeout: time.Minute}
	for _, c := range []struct {
		name string
		edit func(*Config)
		want string // "" = fine
	}{
		{"fine", func(*Config) {}, ""},
		{"no shards", func(c *Config) { c.Shards = 0 }, "--shards 0: expected the number of shards, at least 1"},
		{"negative lead", func(c *Config) { c.Lead = -time.Second }, "--lead -1s, --timeout 1m0s: expected a lead of 0 or more"},
		{"no timeout", func(c *Config) { c.Timeout = 0 }, "a positive timeout"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := ok
			c.edit(&cfg)
			err := cfg.Check()
			if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
				t.Errorf("Check() = %v, want %q", err, c.want)
			}
		})
	}
}

// Serve answers the one shard at both gates and returns nil once it has
// its measured phase's start, after telling who listens and who joined.
func TestServeOneShard(t *testing.T) {
	t.Parallel()
	addr := make(chan net.Addr, 1)
	var phases []string
	cfg := Config{Shards: 1, Listen: "127.0.0.1:0", RunID: "run-s", Timeout: time.Hour,
		OnListen: func(a net.Addr) { addr <- a },
		OnJoin:   func(jr JoinRequest, _ int) { phases = append(phases, jr.Phase) }}
	done := make(chan error, 1)
	go func() { done <- cfg.Serve(context.Background()) }()
	url := "http://" + (<-addr).String()
	j, err := Join(context.Background(), http.DefaultClient, url, JoinRequest{Index: 0, Count: 1, ConfigHash: "h"})
	if err != nil || j.RunID != "run-s" {
		t.Fatalf("Join: %+v, %v", j, err)
	}
	if _, err := JoinMeasure(context.Background(), http.DefaultClient, url, JoinRequest{Index: 0, Count: 1, ConfigHash: "h"}, j.Clock); err != nil {
		t.Fatalf("JoinMeasure: %v", err)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
	if strings.Join(phases, ",") != PhaseStart+","+PhaseMeasure {
		t.Errorf("joined at %q, want the start then the measure gate", phases)
	}
}

// Serve gives up at its timeout, naming how many joined, and stops when
// its context ends.
func TestServeGivesUp(t *testing.T) {
	t.Parallel()
	err := Config{Shards: 2, Listen: "127.0.0.1:0", Timeout: time.Millisecond}.Serve(context.Background())
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "0 of 2 shards joined") {
		t.Errorf("timeout: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = Config{Shards: 2, Listen: "127.0.0.1:0", Timeout: time.Hour}.Serve(ctx)
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("cancelled: %v", err)
	}
	if err := (Config{Shards: 1, Listen: "256.0.0.1:x", Timeout: time.Hour}).Serve(context.Background()); err == nil || !strings.HasPrefix(err.Error(), "--listen 256.0.0.1:x: ") {
		t.Errorf("bad --listen: %v", err)
	}
}
