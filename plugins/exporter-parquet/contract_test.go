package main

import (
	"testing"

	"github.com/lmbench/lmbench/sdk/exporter"
	"github.com/lmbench/lmbench/sdk/sdktest"
)

func TestContract(t *testing.T) {
	sdktest.CheckExporter(t, Definition, nil, exporter.RunMetadata{
		RunID: "r", Workload: "long-doc-qa", OutputDir: t.TempDir(), TagKeys: []string{"doc", "query"},
	})
}
