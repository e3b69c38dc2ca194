// Package ui holds lmbench's terminal user interface, built on
// charmbracelet's huh, bubbletea and lipgloss:
//
//   - [RunSetup] is the guided setup, shown when required arguments are
//     missing and stdin and stdout are a terminal. It asks for the missing
//     values first, then offers the general settings and the workload's
//     settings (built from the plugin's option schema, so any workload gets
//     a form), validates each answer as it is typed, shows a summary and
//     ends with start, export config or cancel. It runs every page inside
//     one Bubble Tea program so a single reader serves the whole setup.
//   - [Live] is the live progress display, a [bench.ProgressSink]: it
//     redraws its frame in place (cursor up, erase down; no raw mode) on
//     every snapshot, prints log lines written to [Live.LogWriter] above
//     the frame, keeps the last [LogLines] of them in it, and erases
//     itself on Close so the summary that follows is clean.
//
// Both take their input and output as parameters, so tests drive them
// headlessly: scripted key presses through a pipe for the form, a buffer
// read by a small terminal model for the display.
package ui
