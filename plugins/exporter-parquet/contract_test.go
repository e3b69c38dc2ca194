package main

import (
	"testing"

	"github.com/lmbench/lmbench/sdk/exporter"
	"github.com/lmbench/lmbench/sdk/sdktest"
)

func TestContract(t *testing.T) {
	// CheckExporter fills in the run's id, workload and a fresh directory.
	sdktest.CheckExporter(t, Definition, nil, exporter.RunMetadata{TagKeys: []string{"doc", "query"}})
}
