package main

import (
	"testing"

	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

func TestContract(t *testing.T) {
	sdktest.CheckWorkload(t, Definition, sdktest.Options{
		Options: map[string]any{"document-length": 50},
		Common:  workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 500}, // 10 documents
	})
}
