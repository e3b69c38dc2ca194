package bench

import (
	"testing"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/kvcache"
	"github.com/lmbench/lmbench/core/pluginset"
	"github.com/lmbench/lmbench/sdk/protocol"
)

func benchOf(t *testing.T, environ ...string) Job {
	t.Helper()
	v, err := config.NewRunRegistry().Load(config.Sources{Environ: environ, Partial: true})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := config.Build(v)
	if err != nil {
		t.Fatal(err)
	}
	p := &Prepared{Engine: spec.Engine, APIKey: "k", Served: "m"}
	if spec.Engine.Builtin {
		p.Engine = spec.Engine.Started("http://127.0.0.1:9")
	}
	return Job{Spec: spec, Prepared: p, Workload: &pluginset.Workload{}, Log: zerolog.Nop()}
}

// The connection cap comes from the open-file limit unless given, halved
// with the built-in engine (its side of every connection is in this
// process too).
func TestBenchSenderConfig(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		environ []string
		want    int
	}{
		{[]string{"LMBENCH_ENGINE_URL=h:1"}, engine.DefaultMaxConnections()},
		{[]string{"LMBENCH_ENGINE_URL=builtin"}, max(engine.DefaultMaxConnections()/2, 1)},
		{[]string{"LMBENCH_ENGINE_URL=builtin", "LMBENCH_MAX_CONNECTIONS=7"}, 7}, // given: not halved
	} {
		b := benchOf(t, c.environ...)
		got := b.senderConfig()
		if got.MaxConnections != c.want || got.BaseURL != b.Prepared.Engine.Base || got.APIKey != "k" || got.Model != "m" {
			t.Errorf("%v: %+v, want %d connections", c.environ, got, c.want)
		}
	}
}

// The Plan's settings come from the Spec and what Prepare found.
func TestBenchPlan(t *testing.T) {
	t.Parallel()
	b := benchOf(t, "LMBENCH_ENGINE_URL=builtin", "LMBENCH_RESET_CACHE=before-measure", "LMBENCH_MAX_CONCURRENCY=10",
		"LMBENCH_METRICS_INTERVAL=3s", "LMBENCH_ABORT_WINDOW=9", "LMBENCH_HEALTH_INTERVAL=0")
	b.BuiltinBlockSize = 32
	b.Part = protocol.Shard{Index: 1, Count: 3}
	b.Workload.Caps = protocol.Capabilities{protocol.RequestedRate}
	b.Prepared.Configured.RequestedRate = 30
	p := b.plan(nil)
	switch {
	case p.Reset == nil || p.Reset.URL != "http://127.0.0.1:9/reset_prefix_cache" || p.Reset.When != kvcache.ResetBeforeMeasure:
		t.Errorf("reset %+v", p.Reset)
	case p.Metrics == nil || p.Metrics.URL != "http://127.0.0.1:9/metrics" || p.Metrics.Interval.Seconds() != 3:
		t.Errorf("metrics %+v", p.Metrics)
	case p.BlockSize != 32 || p.BlockSizeFrom != kvcache.BlockFromBuiltin:
		t.Errorf("block %d from %s", p.BlockSize, p.BlockSizeFrom)
	case p.MaxConcurrency != 3 || p.RequestedRate != 10:
		t.Errorf("shard's part: concurrency %d, rate %v", p.MaxConcurrency, p.RequestedRate)
	case p.Abort.Window != 9 || p.Abort.Health.BaseURL != "http://127.0.0.1:9/v1" || p.Abort.Health.Interval != 0:
		t.Errorf("abort %+v", p.Abort)
	case p.Report.EngineURL != "builtin (http://127.0.0.1:9)" || p.EngineURL != "http://127.0.0.1:9/v1":
		t.Errorf("engine %q, %q", p.Report.EngineURL, p.EngineURL)
	}
}
