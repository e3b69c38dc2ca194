package main

import (
	"testing"

	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

func TestContract(t *testing.T) {
	sdktest.CheckWorkload(t, Definition, sdktest.Options{
		Options: map[string]any{"shared-prompt-length": 20, "chat-history-length": 30, "qps": 10.0, "duration": 1.0},
		Common:  workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 150}, // 3 sessions
	})
}
