package main

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

// A sharded run is refused with the reason, by the check before any
// traffic and by Configure for a host that skips the check, in words and
// in exact mode; an unsharded one (and a 1-shard one) runs.
func TestShardRefused(t *testing.T) {
	t.Parallel()
	opts := map[string]any{"context-length": 400, "prefix-ratio": 0.5, "thrash": 0.01}
	noCheck := slices.DeleteFunc(slices.Clone(protocol.WorkloadCapabilities), func(c string) bool { return c == protocol.CheckOptions })
	for _, caps := range [][]string{nil, noCheck} {
		for _, tokens := range []protocol.TokenCounter{nil, &sdktest.FakeTokenizer{}} {
			_, err := sdktest.RunE(Definition, sdktest.Options{
				Options: opts, Common: workload.Common{Shard: protocol.Shard{Index: 1, Count: 3}},
				HostCapabilities: caps, Tokens: tokens,
			})
			var ce *sdktest.ConfigError
			if !errors.As(err, &ce) || len(ce.Errors) != 1 {
				t.Fatalf("capabilities %v, tokenizer %v: error %v, want one configuration error", caps, tokens != nil, err)
			}
			msg := ce.Errors[0].Message
			for _, want := range []string{"cannot be sharded (--shard 1/3)", "one request at a time", "3 requests in flight", "Run it unsharded"} {
				if !strings.Contains(msg, want) {
					t.Errorf("capabilities %v: refusal %q does not say %q", caps, msg, want)
				}
			}
		}
	}
	for _, s := range []protocol.Shard{{}, {Index: 0, Count: 1}} {
		if _, err := sdktest.RunE(Definition, sdktest.Options{Options: opts, Common: workload.Common{Shard: s}}); err != nil {
			t.Errorf("shard %+v: %v", s, err)
		}
	}
}
