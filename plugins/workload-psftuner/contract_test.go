package main

import (
	"testing"

	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

func TestContract(t *testing.T) {
	sdktest.CheckWorkload(t, Definition, sdktest.Options{
		Options: map[string]any{"context-length": 1000},
		Common:  workload.Common{TokensPerGB: 1000}, // 20 GB × 1.05 × 1000 / 800 = 26 prefixes
	})
}
