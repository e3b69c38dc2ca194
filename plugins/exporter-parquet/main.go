// Command lmbench-exporter-parquet is the Parquet exporter plugin: one row
// per request (warmup and measured) in bench_results.parquet, with typed
// columns, the request tags as a map and as one column per declared tag
// key, and the run's metadata and final summary in the file footer. The
// columns are documented in docs/results-schema.md.
package main

import "github.com/lmbench/lmbench/sdk/exporter"

// Options are the Parquet exporter's settings.
type Options struct {
	File         string `opt:"file" label:"Parquet file" help:"File to write; a relative path is inside the output directory. It appears under this name only once complete."`
	Compression  string `opt:"compression" label:"Compression" enum:"zstd,snappy,gzip,lz4,none" help:"Column compression codec."`
	RowGroupSize int    `opt:"row-group-size" label:"Rows per row group" min:"1" max:"10000000" help:"Rows buffered in memory before a row group is written out; bounds the exporter's memory on long runs."`
}

// Definition is the plugin.
var Definition = exporter.Definition[Options]{
	Name:     "parquet",
	Prefix:   "parquet",
	Summary:  "Per-request results as Parquet (bench_results.parquet)",
	Version:  "0.1.0",
	Defaults: Options{File: "bench_results.parquet", Compression: "zstd", RowGroupSize: 10000},
	New:      newParquetExporter,
}

func main() { exporter.Serve(Definition) }
