package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/host"
)

func loadLimits(t *testing.T, environ []string, builtin bool) (runLimits, error) {
	t.Helper()
	v, err := hostRegistry().Load(config.Sources{Environ: environ, Partial: true})
	if err != nil {
		t.Fatal(err)
	}
	return limits(v, builtin)
}

func TestLimitsDefaults(t *testing.T) {
	t.Parallel()
	for _, builtin := range []bool{false, true} {
		got, err := loadLimits(t, []string{}, builtin)
		if err != nil {
			t.Fatal(err)
		}
		conns := engine.DefaultMaxConnections()
		if builtin {
			conns = max(conns/2, 1) // the built-in engine's side of every connection is in this process too
		}
		want := runLimits{
			timeouts:       engine.DefaultTimeouts(),
			maxConnections: conns,
			abort: host.AbortPolicy{ConnectionFailures: host.DefaultAbortAfterFailures, FailureRate: host.DefaultAbortFailureRate,
				Window: host.DefaultAbortWindow, Health: host.HealthProbe{Interval: host.DefaultHealthInterval}},
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(runLimits{}), cmpopts.IgnoreUnexported(host.HealthProbe{})); diff != "" {
			t.Errorf("builtin %v (-want +got):\n%s", builtin, diff)
		}
	}
}

func TestLimitsFromTheEnvironment(t *testing.T) {
	t.Parallel()
	got, err := loadLimits(t, []string{
		"LMBENCH_CONNECT_TIMEOUT=1s", "LMBENCH_FIRST_TOKEN_TIMEOUT=0", "LMBENCH_IDLE_TIMEOUT=3s", "LMBENCH_REQUEST_TIMEOUT=1h",
		"LMBENCH_MAX_CONNECTIONS=7", "LMBENCH_ABORT_AFTER_FAILURES=0", "LMBENCH_ABORT_FAILURE_RATE=0.5", "LMBENCH_ABORT_WINDOW=4",
		"LMBENCH_HEALTH_INTERVAL=0", "LMBENCH_ALLOW_WARMUP_FAILURES=true",
	}, true)
	if err != nil {
		t.Fatal(err)
	}
	want := runLimits{
		timeouts:       engine.Timeouts{Connect: time.Second, Idle: 3 * time.Second, Request: time.Hour},
		maxConnections: 7, // given: not halved
		abort:          host.AbortPolicy{FailureRate: 0.5, Window: 4, AllowWarmupFailures: true},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(runLimits{}), cmpopts.IgnoreUnexported(host.HealthProbe{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Every bad value is reported at once, each naming its variable, the
// value and what is expected.
func TestLimitsRefuseBadValues(t *testing.T) {
	t.Parallel()
	_, err := loadLimits(t, []string{
		"LMBENCH_DRAIN_TIMEOUT=-1s", "LMBENCH_IDLE_TIMEOUT=-2s", "LMBENCH_HEALTH_INTERVAL=-1ms",
		"LMBENCH_MAX_CONNECTIONS=-1", "LMBENCH_ABORT_WINDOW=0", "LMBENCH_ABORT_FAILURE_RATE=1.01",
	}, false)
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
