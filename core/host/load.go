package host

import (
	"encoding/json"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/stats"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Configuration keys the summary reads back from a run's recorded
// configuration, as it does the percentiles: --slo (the goodput limits)
// and --max-concurrency.
const (
	SLOKey            = "slo"
	MaxConcurrencyKey = "max_concurrency"
)

// runSLO is the SLO recorded in run's configuration (none when it has
// none, or none it can read: the CLI checked the value before the run).
func runSLO(run record.Run) stats.SLO {
	var cfg map[string]any
	if len(run.Config) > 0 && json.Unmarshal(run.Config, &cfg) == nil {
		if s, ok := cfg[SLOKey].(string); ok {
			if slo, err := stats.ParseSLO(s); err == nil {
				return slo
			}
		}
	}
	return stats.SLO{}
}

// RequestedRate is the rate a configured workload declared, when it and
// this host agreed on the requested-rate capability (0 otherwise).
func RequestedRate(caps protocol.Capabilities, c protocol.Configured) float64 {
	if !caps.Has(protocol.RequestedRate) || !(c.RequestedRate > 0) {
		return 0
	}
	return c.RequestedRate
}
