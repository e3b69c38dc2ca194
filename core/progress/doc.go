// Package progress is what a run's progress display is fed: a [Snapshot]
// about once a second (phase, counts, the live numbers, the recent
// dispatch lag from [Lags]) to a [Sink], the terminal's live display or
// [Plain] lines when stdout is not a terminal. core/bench takes the
// snapshots; cmd/lmbench/internal/ui draws them.
package progress
