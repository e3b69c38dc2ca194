// Package analysis reads finished runs back to look at them and set them
// side by side: what `lmbench report` plots and `lmbench compare` prints.
//
// Start with [Load] on a run's output directory (or its journal): it
// returns the run's records (both phases), its journal header and its
// summary (the journal's own, the directory's bench_summary.json, or, for
// a run that was killed, one computed from its records). Then:
//
//	a, _ := analysis.Load("out-vllm")
//	b, _ := analysis.Load("out-lmcache")
//	runs := []*analysis.Run{a, b}
//	comps := analysis.CompareAll(runs, analysis.Options{})
//	analysis.WriteComparisons(os.Stdout, runs, comps, analysis.TextOptions{})
//
// Each headline metric (TTFT mean and percentiles, TPOT, pooled ITL, E2E,
// throughput) comes with the ratio B/A and a 95% percentile-bootstrap
// interval of it: requests are resampled with replacement, independently
// in each run, from a seeded generator, so the same runs always print the
// same interval. A ratio whose interval excludes 1 is marked beyond noise.
// Runs of the same workload and seed are also paired request by request
// ([Pair]): the distribution of per-request TTFT ratios and the share of
// requests that got faster.
//
// Percentiles are numpy's linear method, as in bench_summary.json, so a
// point estimate here equals the summary's figure for the same run.
package analysis
