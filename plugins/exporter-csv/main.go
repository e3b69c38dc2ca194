// Command lmbench-exporter-csv is the CSV exporter plugin: one row per
// request in bench_results.csv, formatted like the original's csv.DictWriter.
package main

import "github.com/lmbench/lmbench/sdk/exporter"

// Options are the CSV exporter's settings.
type Options struct {
	File          string `opt:"file" label:"CSV file" help:"File to write; a relative path is inside the output directory."`
	IncludeWarmup bool   `opt:"include-warmup" label:"Include warmup requests" help:"Also write warmup requests (the phase column tells them apart)."`
}

// Definition is the plugin.
var Definition = exporter.Definition[Options]{
	Name:     "csv",
	Prefix:   "csv",
	Summary:  "Per-request results as CSV (bench_results.csv)",
	Version:  "0.1.0",
	Defaults: Options{File: "bench_results.csv"},
	New:      newCSVExporter,
}

func main() { exporter.Serve(Definition) }
