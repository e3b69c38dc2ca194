package host

import (
	"github.com/lmbench/lmbench/sdk/protocol"
)

// RequestedRate is the rate a configured workload declared, when it and
// this host agreed on the requested-rate capability (0 otherwise).
func RequestedRate(caps protocol.Capabilities, c protocol.Configured) float64 {
	if !caps.Has(protocol.RequestedRate) || !(c.RequestedRate > 0) {
		return 0
	}
	return c.RequestedRate
}
