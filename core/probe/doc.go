// Package probe is lmbench probe without the terminal: [Engine] checks the
// address, kind and metrics URL given (a mistake is a config.UsageError,
// before any traffic), asks the engine what it is (core/engine/profile)
// and what a run could measure on it, and [Probed.Write] prints the report
// in plain words or as JSON.
package probe
