package main

import (
	"testing"

	"github.com/lmbench/lmbench/sdk/sdktest"
)

func TestContract(t *testing.T) {
	sdktest.CheckWorkload(t, Definition, sdktest.Options{Options: smallOptions})
}

var smallOptions = map[string]any{"num-requests": 5, "request-length": 20}
