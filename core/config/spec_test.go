package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/engine"
)

// buildFrom builds a Spec from environment variables alone (the engine
// given unless environ names one).
func buildFrom(t *testing.T, environ ...string) (*Spec, error) {
	t.Helper()
	if !strings.Contains(strings.Join(environ, " "), "LMBENCH_ENGINE_URL=") {
		environ = append(environ, "LMBENCH_ENGINE_URL=http://127.0.0.1:8000")
	}
	v, err := NewRunRegistry().Load(Sources{Environ: environ, Partial: true})
	if err != nil {
		t.Fatal(err)
	}
	return Build(v)
}

func TestLimitsDefaults(t *testing.T) {
	t.Parallel()
	s, err := buildFrom(t)
	if err != nil {
		t.Fatal(err)
	}
	want := Limits{
		Timeouts:           engine.DefaultTimeouts(),
		AbortAfterFailures: DefaultAbortAfterFailures, AbortFailureRate: DefaultAbortFailureRate,
		AbortWindow: DefaultAbortWindow, HealthInterval: DefaultHealthInterval,
	}
	if diff := cmp.Diff(want, s.Limits); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestLimitsFromTheEnvironment(t *testing.T) {
	t.Parallel()
	s, err := buildFrom(t,
		"LMBENCH_CONNECT_TIMEOUT=1s", "LMBENCH_FIRST_TOKEN_TIMEOUT=0", "LMBENCH_IDLE_TIMEOUT=3s", "LMBENCH_REQUEST_TIMEOUT=1h",
		"LMBENCH_MAX_CONNECTIONS=7", "LMBENCH_ABORT_AFTER_FAILURES=0", "LMBENCH_ABORT_FAILURE_RATE=0.5", "LMBENCH_ABORT_WINDOW=4",
		"LMBENCH_HEALTH_INTERVAL=0", "LMBENCH_ALLOW_WARMUP_FAILURES=true",
	)
	if err != nil {
		t.Fatal(err)
	}
	want := Limits{
		Timeouts:       engine.Timeouts{Connect: time.Second, Idle: 3 * time.Second, Request: time.Hour},
		MaxConnections: 7, AbortFailureRate: 0.5, AbortWindow: 4, AllowWarmupFailures: true,
	}
	if diff := cmp.Diff(want, s.Limits); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Every bad value is reported at once, each naming its variable, the
// value and what is expected.
func TestLimitsRefuseBadValues(t *testing.T) {
	t.Parallel()
	_, err := buildFrom(t,
		"LMBENCH_DRAIN_TIMEOUT=-1s", "LMBENCH_IDLE_TIMEOUT=-2s", "LMBENCH_HEALTH_INTERVAL=-1ms",
		"LMBENCH_MAX_CONNECTIONS=-1", "LMBENCH_ABORT_WINDOW=0", "LMBENCH_ABORT_FAILURE_RATE=1.01",
	)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"LMBENCH_DRAIN_TIMEOUT: must be >= 0 (0: the default, 30s), got -1s",
		"LMBENCH_IDLE_TIMEOUT: must be >= 0 (0: no limit), got -2s",
		"LMBENCH_HEALTH_INTERVAL: must be >= 0 (0: no probe), got -1ms",
		"LMBENCH_MAX_CONNECTIONS: must be between 0 and 2147483647 (0: from the open-file limit), got -1",
		"LMBENCH_ABORT_WINDOW: must be between 1 and 2147483647, got 0",
		"LMBENCH_ABORT_FAILURE_RATE: must be between 0 and 1 (0: never), got 1.01",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// The engine's URLs are derived once, from the address as typed.
func TestEndpoint(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		environ []string
		want    Endpoint
	}{
		{[]string{"LMBENCH_ENGINE_URL=8000"}, Endpoint{Typed: "http://localhost:8000", Base: "http://localhost:8000/v1", Root: "http://localhost:8000",
			Shown: "http://localhost:8000/v1", MetricsURL: "http://localhost:8000/metrics", ResetURL: "http://localhost:8000/reset_prefix_cache"}},
		{[]string{"LMBENCH_ENGINE_URL=https://u:pw@h:9/p/v1/chat/completions"}, Endpoint{Typed: "https://u:pw@h:9/p/v1/chat/completions",
			Base: "https://u:pw@h:9/p/v1", Root: "https://u:pw@h:9/p", Shown: "https://h:9/p/v1", Stripped: "/chat/completions",
			MetricsURL: "https://h:9/metrics", ResetURL: "https://h:9/reset_prefix_cache"}},
		{[]string{"LMBENCH_ENGINE_URL=h:1", "LMBENCH_METRICS_URL=http://m:2/x"}, Endpoint{Typed: "h:1", Base: "http://h:1/v1", Root: "http://h:1",
			Shown: "http://h:1/v1", MetricsURL: "http://m:2/x", ResetURL: "http://h:1/reset_prefix_cache"}},
		{[]string{"LMBENCH_ENGINE_URL=h:1", "LMBENCH_NO_METRICS=true"}, Endpoint{Typed: "h:1", Base: "http://h:1/v1", Root: "http://h:1",
			Shown: "http://h:1/v1", ResetURL: "http://h:1/reset_prefix_cache"}},
		{[]string{"LMBENCH_ENGINE_URL=builtin"}, Endpoint{Typed: "builtin", Builtin: true}},
	} {
		s, err := buildFrom(t, c.environ...)
		if err != nil {
			t.Fatalf("%v: %v", c.environ, err)
		}
		got := s.Engine
		got.Origin = ""
		if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(Endpoint{}), cmp.FilterPath(func(p cmp.Path) bool {
			return p.Last().String() == ".metricsURL" || p.Last().String() == ".metricsOff"
		}, cmp.Ignore())); diff != "" {
			t.Errorf("%v (-want +got):\n%s", c.environ, diff)
		}
	}
	s, err := buildFrom(t, "LMBENCH_ENGINE_URL=builtin")
	if err != nil {
		t.Fatal(err)
	}
	got := s.Engine.Started("http://127.0.0.1:4321")
	if got.Base != "http://127.0.0.1:4321/v1" || got.Shown != "builtin (http://127.0.0.1:4321)" ||
		got.MetricsURL != "http://127.0.0.1:4321/metrics" || got.ResetURL != "http://127.0.0.1:4321/reset_prefix_cache" {
		t.Errorf("started: %+v", got)
	}
}

// Bad addresses are refused by Build, naming where they came from.
func TestEndpointRefused(t *testing.T) {
	t.Parallel()
	for env, want := range map[string]string{
		"LMBENCH_ENGINE_URL=ftp://h:1":  `LMBENCH_ENGINE_URL: "ftp://h:1" has the scheme "ftp"; expected http:// or https://`,
		"LMBENCH_ENGINE_URL=h:1?x=1":    "LMBENCH_ENGINE_URL: \"h:1?x=1\" has a query or fragment",
		"LMBENCH_LMCACHE_URL=http://":   `LMBENCH_LMCACHE_URL: "http://" has no host`,
		"LMBENCH_METRICS_URL=localhost": `LMBENCH_METRICS_URL: want an http:// or https:// URL`,
		"LMBENCH_KV_CACHE_VOLUME=0":     "LMBENCH_KV_CACHE_VOLUME: must be positive, got 0",
		"LMBENCH_PERCENTILES=0":         "LMBENCH_PERCENTILES: ",
		"LMBENCH_BLOCK_SIZE=0":          "LMBENCH_BLOCK_SIZE: must be >= 1, got 0",
		"LMBENCH_MAX_CONCURRENCY=-1":    "LMBENCH_MAX_CONCURRENCY: must be between 0 (no cap) and 1048576 requests, got -1",
		"LMBENCH_SLO=ttft":              "LMBENCH_SLO: ",
	} {
		_, err := buildFrom(t, env)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: error %v, want one starting %q", env, err, want)
		}
	}
}

// A bare port on --engine-url or --lmcache-url means this machine, as in
// the original's setup; anything else is left as typed.
func TestPortOnly(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"8000":             "http://localhost:8000",
		" 8080 ":           "http://localhost:8080",
		"localhost:8000":   "localhost:8000",
		"http://h:8000/v1": "http://h:8000/v1",
		"builtin":          "builtin",
		"70000":            "70000",
		"":                 "",
	} {
		if got := PortOnly(in); got != want {
			t.Errorf("PortOnly(%q) = %q, want %q", in, got, want)
		}
	}
}

// --tokenizer is recorded when it was given, so a run in words and one in
// a file's tokens differ in their configurations (compare says so).
func TestEntriesRecordTheTokenizer(t *testing.T) {
	t.Parallel()
	has := func(es []Entry) any {
		for _, e := range es {
			if e.Key == keyTokenizer {
				return e.Value
			}
		}
		return nil
	}
	s, err := buildFrom(t, "LMBENCH_ENGINE_KIND=ollama")
	if err != nil {
		t.Fatal(err)
	}
	if s.EngineKind != "ollama" {
		t.Errorf("EngineKind = %q, want ollama", s.EngineKind)
	}
	if v := has(s.Entries(Found{Workload: "w"})); v != nil {
		t.Errorf("the default tokenizer recorded: %v", v)
	}
	if s, err = buildFrom(t, "LMBENCH_TOKENIZER=/m/tokenizer.json"); err != nil {
		t.Fatal(err)
	}
	if v := has(s.Entries(Found{Workload: "w"})); v != "/m/tokenizer.json" {
		t.Errorf("tokenizer recorded as %v, want the path", v)
	}
}

func TestEngineKindRefusesUnknown(t *testing.T) {
	t.Parallel()
	v, err := NewRunRegistry().Load(Sources{Environ: []string{"LMBENCH_ENGINE_URL=http://127.0.0.1:8000", "LMBENCH_ENGINE_KIND=vlm"}, Partial: true})
	if err == nil {
		_, err = Build(v)
	}
	if err == nil || !strings.Contains(err.Error(), "LMBENCH_ENGINE_KIND") || !strings.Contains(err.Error(), `"vlm"`) {
		t.Errorf("a bad kind: %v", err)
	}
}
