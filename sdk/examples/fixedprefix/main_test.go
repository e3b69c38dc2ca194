package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

// small keeps test runs short; the defaults send 100 requests over 50 s of
// virtual time, which is also fine but says less.
var small = map[string]any{"requests": 5, "qps": 4.0, "prefix-tokens": 20}

// The contract every plugin should pass: a valid schema, deterministic
// runs, the same behaviour over gRPC.
func TestContract(t *testing.T) {
	t.Parallel()
	sdktest.CheckWorkload(t, Definition, sdktest.Options{Options: small})
}

func TestSchedule(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: small})
	if n := len(tr.Warmup()); n != 0 {
		t.Errorf("warmup sent %d requests, want none", n)
	}
	type sent struct {
		ID        string
		Offset    time.Duration
		Scheduled time.Duration
		Tag       string
	}
	var got []sent
	for _, s := range tr.Measured() {
		got = append(got, sent{s.ID, s.Offset, s.Scheduled, s.Tags["i"]})
	}
	want := []sent{
		{"fp_0", 0, 0, "0"},
		{"fp_1", 250 * time.Millisecond, 250 * time.Millisecond, "1"},
		{"fp_2", 500 * time.Millisecond, 500 * time.Millisecond, "2"},
		{"fp_3", 750 * time.Millisecond, 750 * time.Millisecond, "3"},
		{"fp_4", time.Second, time.Second, "4"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("measured requests (-want +got):\n%s", d)
	}
	if tr.Planned != 5 {
		t.Errorf("Planned = %d, want 5", tr.Planned)
	}
}

// prefixOf is the shared part of a request's text.
func prefixOf(s sdktest.Sent) string {
	text := s.Messages[0].Content
	return text[:strings.Index(text, "\nQuestion")]
}

func TestSharedPrefix(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: small})
	reqs := tr.Measured()
	prefix := prefixOf(reqs[0])
	if n := len(strings.Fields(prefix)); n != 20 {
		t.Errorf("prefix has %d words, want 20", n)
	}
	for _, s := range reqs {
		if got := prefixOf(s); got != prefix {
			t.Errorf("%s: prefix %q, want the shared %q", s.ID, got, prefix)
		}
		if s.MaxTokens != 32 {
			t.Errorf("%s: max_tokens %d, want 32", s.ID, s.MaxTokens)
		}
	}
	other := sdktest.Run(t, Definition, sdktest.Options{Options: small, Common: workload.Common{Seed: 7}})
	if prefixOf(other.Measured()[0]) == prefix {
		t.Error("another seed gave the same prefix")
	}
}

func TestOptionErrors(t *testing.T) {
	t.Parallel()
	sdktest.CheckFieldErrors(t, Definition, sdktest.Options{}, []sdktest.FieldErrorCase{
		{Name: "qps 0", Options: map[string]any{"qps": 0.0},
			Want: []option.FieldError{{Option: "qps", Message: "must be >= 0.001, got 0"}}},
		{Name: "no requests", Options: map[string]any{"requests": 0},
			Want: []option.FieldError{{Option: "requests", Message: "must be >= 1, got 0"}}},
		{Name: "not a number", Options: map[string]any{"prefix-tokens": "many"},
			Want: []option.FieldError{{Option: "prefix-tokens", Message: `expected an integer, got "many"`}}},
		{Name: "unknown option", Options: map[string]any{"rate": 1.0},
			Want: []option.FieldError{{Option: "rate", Message: "unknown option"}}},
		// Every problem at once, so one run shows them all.
		{Name: "all at once", Options: map[string]any{"qps": 0.0, "requests": 0, "prefix-tokens": "many"},
			Want: []option.FieldError{
				{Option: "prefix-tokens", Message: `expected an integer, got "many"`},
				{Option: "requests", Message: "must be >= 1, got 0"},
				{Option: "qps", Message: "must be >= 0.001, got 0"},
			}},
	})
}

// Three shards together send the unsharded run's requests, each on the
// global schedule's time.
func TestSharding(t *testing.T) {
	t.Parallel()
	sdktest.CheckSharding(t, Definition, sdktest.Options{Options: map[string]any{"requests": 8, "qps": 4.0, "prefix-tokens": 20}}, 3)
}
