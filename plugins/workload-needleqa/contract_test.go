package main

import (
	"testing"

	"github.com/lmbench/lmbench/sdk/sdktest"
)

func TestContract(t *testing.T) {
	sdktest.CheckWorkload(t, Definition, small(nil))
	sdktest.CheckWorkload(t, Definition, small(map[string]any{"variant": variantPermuted, "documents-per-prompt": 2}))
}
