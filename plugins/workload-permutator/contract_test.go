package main

import (
	"testing"

	"github.com/lmbench/lmbench/sdk/sdktest"
)

func TestContract(t *testing.T) {
	sdktest.CheckWorkload(t, Definition, sdktest.Options{
		Options: map[string]any{"num-contexts": 3, "context-length": 40, "system-prompt-length": 10, "num-inflight-requests": 2},
	})
}
