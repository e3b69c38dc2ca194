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
//   - [Live] is the live progress display, a [progress.Sink]: it
//     redraws its frame in place (cursor up, erase down; no raw mode) on
//     every snapshot and erases itself on Close so the summary that
//     follows is clean.
//
// # Log lines during the live display
//
// While a [Live] is up, log output goes to [Live.LogWriter], and each log
// line reaches the final terminal output exactly once. What a user sees:
//
//   - At the bottom of the terminal, from the first snapshot on (about a
//     second in), the frame: the progress lines and, once anything was
//     logged, a "recent log" box with the last
//     [LogLines] log lines of any level, in the order logged, each cut to
//     the terminal's width.
//   - Warnings and errors (zerolog's warn level and above, passed through
//     WriteLevel) are also printed above the frame the moment they are
//     logged, in full, so they are seen at once and stay in the
//     scrollback even if the process dies. While such a line is among the
//     last five it is thus on screen twice: above the frame and in the
//     box; the box goes away at Close.
//   - Every other line (info, debug, trace, and anything written with a
//     plain Write) is shown only in the box while the display is up, and
//     held back. When the display closes (the run ends, or is interrupted
//     and drains), the frame is erased and the held lines are printed in
//     its place, in full and in the order they were logged, then, if more
//     than [HeldLogLines] were logged, a single "(N earlier log lines were
//     dropped)" note (the oldest are the ones dropped), and then the
//     summary. Warnings are not printed again, so in the scrollback they
//     come before the info lines logged around them; the timestamps keep
//     the order readable.
//   - If the process is killed before Close (a second Ctrl-C, a crash),
//     the held lines are lost; warnings and errors are already on screen.
//
// Both take their input and output as parameters, so tests drive them
// headlessly: scripted key presses through a pipe for the form, a buffer
// read by a small terminal model for the display.
package ui
