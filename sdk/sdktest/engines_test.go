package sdktest_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/sdktest"
)

func TestOutOfOrderEngine(t *testing.T) {
	t.Parallel()
	latencies := map[time.Duration]bool{}
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		s := sdktest.Sent{ID: id, MaxTokens: 5}
		r := sdktest.OutOfOrderEngine(s)
		if d := cmp.Diff(r, sdktest.OutOfOrderEngine(s)); d != "" {
			t.Errorf("%s: two answers differ (-first +second):\n%s", id, d)
		}
		if !r.Success || r.Latency < time.Millisecond || r.Latency > 7*time.Millisecond || r.TTFT != r.Latency/2 || r.OutputTokens != 5 {
			t.Errorf("%s: %+v", id, r)
		}
		latencies[r.Latency] = true
	}
	if len(latencies) < 2 {
		t.Errorf("every request takes the same time (%v): nothing finishes out of order", latencies)
	}
}

func TestFixedEngine(t *testing.T) {
	t.Parallel()
	got := sdktest.FixedEngine(40 * time.Millisecond)(sdktest.Sent{ID: "q1", MaxTokens: 3})
	want := sdktest.Reply{Success: true, Text: "answer to q1", TTFT: 20 * time.Millisecond, Latency: 40 * time.Millisecond, InputTokens: 10, OutputTokens: 3}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("reply (-want +got):\n%s", d)
	}
}

// fatal records what UserText fails with.
type fatal struct {
	testing.TB
	msg string
}

func (f *fatal) Helper() {}
func (f *fatal) Fatalf(format string, args ...any) {
	f.msg = format
	panic(f)
}

func TestUserText(t *testing.T) {
	t.Parallel()
	one := sdktest.Sent{ID: "q0", Messages: []sdktest.Message{{Role: "user", Content: "hi there"}}}
	if got := sdktest.UserText(t, one); got != "hi there" {
		t.Errorf("UserText = %q", got)
	}
	for _, s := range []sdktest.Sent{
		{ID: "none"},
		{ID: "system", Messages: []sdktest.Message{{Role: "system", Content: "x"}}},
		{ID: "two", Messages: []sdktest.Message{{Role: "user", Content: "a"}, {Role: "user", Content: "b"}}},
	} {
		f := &fatal{TB: t}
		func() {
			defer func() { _ = recover() }()
			sdktest.UserText(f, s)
		}()
		if f.msg == "" {
			t.Errorf("%s: UserText did not fail", s.ID)
		}
	}
}
