package barrier

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func join(t *testing.T, url string, jr JoinRequest) (Joined, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Join(ctx, http.DefaultClient, url, jr)
}

// Every shard gets the same run id and start, once all have joined; the
// offset each measured against a barrier whose clock runs 5 s ahead is
// 5 s, within half its round trip.
func TestJoinAllOneStart(t *testing.T) {
	t.Parallel()
	const ahead = 5 * time.Second
	srv := NewServer(3, "run-1", 200*time.Millisecond)
	srv.Now = func() time.Time { return time.Now().Add(ahead) }
	ts := httptest.NewServer(srv)
	defer ts.Close()

	var wg sync.WaitGroup
	got := make([]Joined, 3)
	errs := make([]error, 3)
	for i := range 3 {
		wg.Go(func() {
			got[i], errs[i] = join(t, ts.URL, JoinRequest{Index: i, Count: 3, ConfigHash: "h", Host: "n"})
		})
	}
	wg.Wait()
	for i := range 3 {
		if errs[i] != nil {
			t.Fatalf("shard %d: %v", i, errs[i])
		}
		j := got[i]
		if j.RunID != "run-1" || !j.Start.Equal(got[0].Start) {
			t.Errorf("shard %d: run %q start %v; want run-1 and shard 0's %v", i, j.RunID, j.Start, got[0].Start)
		}
		if d := j.Clock.Offset - ahead; d > j.Clock.RTT/2+time.Millisecond || -d > j.Clock.RTT/2+time.Millisecond {
			t.Errorf("shard %d: offset %v, want %v ± %v (half the round trip)", i, j.Clock.Offset, ahead, j.Clock.RTT/2)
		}
		if j.Clock.Samples != Samples || !strings.HasPrefix(j.Clock.Reference, "barrier ") {
			t.Errorf("shard %d: clock %+v", i, j.Clock)
		}
		// On the shard's own clock the start is about Lead from now.
		if until := time.Until(j.LocalStart()); until > time.Second || until < -5*time.Second {
			t.Errorf("shard %d: local start %v from now, want about the lead (200ms)", i, until)
		}
	}
	select {
	case <-srv.Done():
		t.Fatal("Done before the measured phase's gate")
	default:
	}
	// The measured phase's gate: one start again, for all.
	var measure [3]Joined
	for i := range 3 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			measure[i], errs[i] = JoinMeasure(ctx, http.DefaultClient, ts.URL, JoinRequest{Index: i, Count: 3, ConfigHash: "h"}, got[i].Clock)
		})
	}
	wg.Wait()
	for i := range 3 {
		if errs[i] != nil || !measure[i].Start.Equal(measure[0].Start) || !measure[i].Start.After(got[0].Start) {
			t.Errorf("shard %d: measure gate %v at %v, want shard 0's %v, after the run's start", i, errs[i], measure[i].Start, measure[0].Start)
		}
	}
	select {
	case <-srv.Done():
	case <-time.After(10 * time.Second):
		t.Error("Done not closed after every shard had its answer")
	}
}

// A shard that stops before its measured phase leaves: the shards
// waiting at the measure gate are told at once, with its reason, and so
// is one that comes later.
func TestLeaveStopsTheOthers(t *testing.T) {
	t.Parallel()
	srv := NewServer(3, "run-4", 0)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			if _, err := join(t, ts.URL, JoinRequest{Index: i, Count: 3, ConfigHash: "h"}); err != nil {
				t.Errorf("shard %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	waiting := make(chan error, 1)
	go func() {
		_, err := JoinMeasure(context.Background(), http.DefaultClient, ts.URL, JoinRequest{Index: 0, Count: 3, ConfigHash: "h"}, Joined{}.Clock)
		waiting <- err
	}()
	if err := Leave(context.Background(), http.DefaultClient, ts.URL, JoinRequest{Index: 2, Count: 3, Reason: "aborted: warmup request w1 failed"}); err != nil {
		t.Fatal(err)
	}
	const want = "shard 2/3 left before the measured phase: aborted: warmup request w1 failed"
	if err := <-waiting; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("waiting shard: %v, want %q", err, want)
	}
	// The barrier stays until shard 1 knows too.
	select {
	case <-srv.Done():
		t.Fatal("Done before every shard was told")
	default:
	}
	_, err := JoinMeasure(context.Background(), http.DefaultClient, ts.URL, JoinRequest{Index: 1, Count: 3, ConfigHash: "h"}, Joined{}.Clock)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("later shard: %v, want %q", err, want)
	}
	if srv.Err() != want {
		t.Errorf("Err() = %q", srv.Err())
	}
	select {
	case <-srv.Done():
	case <-time.After(10 * time.Second):
		t.Error("Done not closed once every shard knew")
	}
}

// A shard whose configuration differs, or with the wrong shard count, or
// an index joined twice, is refused with the reason, at once.
func TestJoinRefusals(t *testing.T) {
	t.Parallel()
	srv := NewServer(2, "run-2", time.Second)
	ts := httptest.NewServer(srv)
	defer ts.Close()

	first := make(chan error, 1)
	go func() {
		_, err := join(t, ts.URL, JoinRequest{Index: 0, Count: 2, ConfigHash: "sha256:aaa", Host: "a"})
		first <- err
	}()
	for srv.Joined() == 0 {
		time.Sleep(5 * time.Millisecond) // wait until shard 0 holds its place
	}
	for _, tc := range []struct {
		jr   JoinRequest
		want string
	}{
		{JoinRequest{Index: 1, Count: 2, ConfigHash: "sha256:bbb"}, "shard 1/2's configuration (sha256:bbb) differs from shard 0/2's (sha256:aaa)"},
		{JoinRequest{Index: 1, Count: 3, ConfigHash: "sha256:aaa"}, "this barrier is for 2 shards"},
		{JoinRequest{Index: 0, Count: 2, ConfigHash: "sha256:aaa"}, `shard 0/2 has joined already (from host "a")`},
		{JoinRequest{Index: 1, Count: 2, ConfigHash: "sha256:aaa", RunID: "other"}, `--run-id "other", the barrier's run is "run-2"`},
	} {
		_, err := join(t, ts.URL, tc.jr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("join %+v: %v, want an error with %q", tc.jr, err, tc.want)
		}
	}
	if _, err := join(t, ts.URL, JoinRequest{Index: 1, Count: 2, ConfigHash: "sha256:aaa"}); err != nil {
		t.Fatal(err)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	// After the start a shard cannot join again.
	_, err := join(t, ts.URL, JoinRequest{Index: 1, Count: 2, ConfigHash: "sha256:aaa"})
	if err == nil || !strings.Contains(err.Error(), "joined the start gate after it opened") {
		t.Errorf("late join: %v", err)
	}
}

// A shard whose connection closes while it waits (it died, or was
// killed) counts as having left: the others are told instead of waiting
// for it until the timeout.
func TestDisconnectWhileWaitingIsALeave(t *testing.T) {
	t.Parallel()
	srv := NewServer(2, "run-3", 0)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Join(ctx, http.DefaultClient, ts.URL, JoinRequest{Index: 0, Count: 2, ConfigHash: "h"})
		done <- err
	}()
	for srv.Joined() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	for srv.Err() == "" {
		time.Sleep(5 * time.Millisecond) // the server notices the closed request
	}
	_, err := join(t, ts.URL, JoinRequest{Index: 1, Count: 2, ConfigHash: "h"})
	const want = "shard 0/2 left before the measured phase: its connection to the barrier closed while it waited at the start gate"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("shard 1: %v, want %q", err, want)
	}
	select {
	case <-srv.Done():
	case <-time.After(10 * time.Second):
		t.Error("Done not closed once both shards knew")
	}
}

func TestNotABarrier(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.NotFoundHandler())
	defer ts.Close()
	_, err := join(t, ts.URL, JoinRequest{Index: 0, Count: 2})
	if err == nil || !strings.Contains(err.Error(), "is not a barrier's clock (HTTP 404)") {
		t.Errorf("err = %v", err)
	}
}

// A shard started before its barrier keeps dialling until it listens.
func TestJoinWaitsForTheBarrierToListen(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: dialling is refused
	done := make(chan error, 1)
	go func() {
		_, err := join(t, "http://"+addr, JoinRequest{Index: 0, Count: 1, ConfigHash: "h"})
		done <- err
	}()
	time.Sleep(1500 * time.Millisecond) // at least one refused dial
	srv := NewServer(1, "late", 0)
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	hs := &http.Server{Handler: srv}
	go hs.Serve(ln)
	defer hs.Close()
	if err := <-done; err != nil {
		t.Errorf("join after the barrier came up: %v", err)
	}
}
