// Package sweep runs one benchmark per value of one number option (a
// ladder of points, one after another), stops the ladder at the first
// point that saturates or breaks the SLO, bisects for the highest value
// that meets the SLO, and writes the sweep's files beside the points'
// directories: sweep_summary.json (Result, read back by Read) and
// sweep_results.csv (every point's rows after a point column), and hands
// a Combiner the finished points for further combined files (the
// Parquet, which needs the exporter plugin).
//
// Start with Run: give it a Config (ParseSpec reads --sweep KEY=VALUES)
// and a Runner that runs one point. The package runs no benchmark itself
// and loads no plugin, so a reader of a sweep (lmbench report) imports it
// without the host's machinery.
package sweep
