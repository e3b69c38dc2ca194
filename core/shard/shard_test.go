package shard

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/barrier"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/sdk/protocol"
)

func TestParseStartAt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want time.Time
		err  string
	}{
		{"2026-12-01T15:00:00Z", time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC), ""},
		{"1796137200.5", time.Unix(1796137200, 5e8), ""},
		{"0", time.Time{}, `"0": expected an RFC 3339 time`},
		{"tomorrow", time.Time{}, `"tomorrow": expected an RFC 3339 time`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseStartAt(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseStartAt(%q) = %v, %v; want an error containing %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || !got.Equal(tt.want) {
				t.Errorf("ParseStartAt(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

// The shards of one run hash the same configuration alike whatever order
// their files wrote its keys in, and derive the same run id from it.
func TestConfigHashAndDefaultRunID(t *testing.T) {
	t.Parallel()
	a := ConfigHash(json.RawMessage(`{"model":"m","seed":1}`))
	b := ConfigHash(json.RawMessage(`{"seed":1, "model":"m"}`))
	if a != b || !strings.HasPrefix(a, "sha256:") {
		t.Errorf("hashes %q, %q: want one sha256: hash", a, b)
	}
	if c := ConfigHash(json.RawMessage(`{"seed":2,"model":"m"}`)); c == a {
		t.Errorf("another configuration hashes to %q too", c)
	}
	at := time.Date(2026, 12, 1, 15, 0, 0, 0, time.FixedZone("CET", 3600))
	if got, want := DefaultRunID(at, a), "20261201T140000Z-"+a[len("sha256:"):len("sha256:")+8]; got != want {
		t.Errorf("DefaultRunID = %q, want %q", got, want)
	}
}

// An unsharded run (a nil Part) has no shard and no gate.
func TestNilPartIsUnsharded(t *testing.T) {
	t.Parallel()
	var p *Part
	if p.WorkloadShard() != (protocol.Shard{}) || p.BeforePhase(nil, zerolog.Nop()) != nil {
		t.Error("a nil Part changed the run")
	}
	p.Leave("exit 1", zerolog.Nop()) // nothing to tell, no panic
	if got := New(protocol.Shard{Index: 1, Count: 3}, "", FixedStart{}).WorkloadShard(); got != (protocol.Shard{Index: 1, Count: 3}) {
		t.Errorf("WorkloadShard = %v, want 1/3", got)
	}
}

// --start-at: the start is the time given, on the local clock; the run
// id is the given one, else derived from the start and the hash.
func TestFixedStart(t *testing.T) {
	t.Parallel()
	at := time.Now().Add(-time.Hour) // past: no wait
	cfg := json.RawMessage(`{"model":"m"}`)
	for _, given := range []string{"", "run-7"} {
		p := New(protocol.Shard{Index: 1, Count: 2}, given, FixedStart{At: at})
		sh, err := p.Start(context.Background(), cfg, 42, 10, zerolog.Nop())
		if err != nil {
			t.Fatal(err)
		}
		want := given
		if want == "" {
			want = DefaultRunID(at, ConfigHash(cfg))
		}
		if sh.RunID != want || !sh.StartAt.Equal(at) || sh.Clock.Reference != "local" || sh.Index != 1 || sh.Count != 2 ||
			sh.ConfigHash != ConfigHash(cfg) || sh.Seed != (protocol.Shard{Index: 1, Count: 2}).Seed(42) || sh.RequestedRate != 10 {
			t.Errorf("given %q: block %+v", given, sh)
		}
		if err := p.BeforePhase(sh, zerolog.Nop())(context.Background(), protocol.Measure); err != nil {
			t.Errorf("the measured phase is held: %v", err)
		}
	}
}

// A shard joins the barrier, gets its run id and start, passes the
// measured gate; once through, leaving tells the barrier nothing.
func TestBarrierStartGateLeave(t *testing.T) {
	t.Parallel()
	srv := barrier.NewServer(1, "run-9", 0)
	var left []barrier.JoinRequest
	srv.OnLeave = func(jr barrier.JoinRequest) { left = append(left, jr) }
	ts := httptest.NewServer(srv)
	defer ts.Close()
	b, err := NewBarrier(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	p := New(protocol.Shard{Index: 0, Count: 1}, "", b)
	sh, err := p.Start(context.Background(), json.RawMessage(`{}`), 1, 0, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if sh.RunID != "run-9" || sh.StartAt.IsZero() || !strings.HasPrefix(sh.Clock.Reference, "barrier ") {
		t.Errorf("block %+v: want run-9, the barrier's start and clock", sh)
	}
	gate := p.BeforePhase(sh, zerolog.Nop())
	for _, ph := range []protocol.Phase{protocol.Warmup, protocol.Measure} {
		if err := gate(context.Background(), ph); err != nil {
			t.Fatalf("%v gate: %v", ph, err)
		}
	}
	p.Leave("exit 0", zerolog.Nop())
	if len(left) != 0 {
		t.Errorf("a shard through its measured gate told the barrier it left: %+v", left)
	}
}

// A shard stopping before it joined tells the barrier once, with its
// reason; a shard at the measured gate after another left gets a
// *GateError naming it.
func TestBarrierLeaveAndGateError(t *testing.T) {
	t.Parallel()
	srv := barrier.NewServer(2, "run-3", 0)
	var mu sync.Mutex
	var left []barrier.JoinRequest
	srv.OnLeave = func(jr barrier.JoinRequest) { mu.Lock(); left = append(left, jr); mu.Unlock() }
	ts := httptest.NewServer(srv)
	defer ts.Close()
	parts := make([]*Part, 2)
	blocks := make([]*record.Shard, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range parts {
		b, err := NewBarrier(ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		parts[i] = New(protocol.Shard{Index: i, Count: 2}, "", b)
		wg.Go(func() {
			blocks[i], errs[i] = parts[i].Start(context.Background(), json.RawMessage(`{}`), 1, 0, zerolog.Nop())
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	parts[1].Leave("aborted: warmup request w1 failed", zerolog.Nop())
	parts[1].Leave("again", zerolog.Nop())
	mu.Lock()
	want := []barrier.JoinRequest{{Index: 1, Count: 2, Host: blocks[1].Host, ConfigHash: ConfigHash(json.RawMessage(`{}`)),
		Reason: "aborted: warmup request w1 failed"}}
	if diff := cmp.Diff(want, left); diff != "" {
		t.Errorf("leaves (-want +got):\n%s", diff)
	}
	mu.Unlock()
	err := parts[0].BeforePhase(blocks[0], zerolog.Nop())(context.Background(), protocol.Measure)
	var gate *GateError
	if !errors.As(err, &gate) || !strings.Contains(err.Error(), "shard 1/2 left before the measured phase: aborted: warmup request w1 failed") {
		t.Errorf("gate after a shard left: %v, want a *GateError naming it", err)
	}
}

func TestNewBarrierChecksTheURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"lmbench-barrier:7070", "ftp://b", "http://"} {
		if _, err := NewBarrier(u); err == nil || !strings.Contains(err.Error(), "expected the barrier's http:// or https:// URL") {
			t.Errorf("NewBarrier(%q) = %v", u, err)
		}
	}
}
