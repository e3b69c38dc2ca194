// Package twin is the built-in engine (core/sim) fitted to a real one: Fit
// reads finished runs (LoadRuns: the journal's per-request timings and
// chunk offsets, cached and prompt tokens, and the engine's metrics when
// the run scraped them) and estimates the engine's cost model, a Profile
// of parameters with uncertainties, the ones the runs could not identify,
// and the residuals of the model on those runs. A profile's Settings
// serve the twin: lmbench sim --profile, --engine-url builtin
// --sim-profile, and so a sweep on the twin predicts one on the engine.
//
// Start with
//
//	runs, err := twin.LoadRuns("out/rate-2", "out/rate-8")
//	prof, err := twin.Fit(runs)
//	err = prof.WriteFile("profile.json")
//
// Replay is the model on its own: a request stream through the engine's
// queues and costs, as core/sim serves it (docs/twin.md).
package twin
