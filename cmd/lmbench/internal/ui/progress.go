package ui

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/lmbench/lmbench/core/progress"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// plainProgressEvery is how often the plain progress line is written.
const plainProgressEvery = 2 * time.Second

// Progress picks a run's progress display: the live one when stdout is a
// terminal (logs then go through it: warnings printed above the display at
// once, other lines shown in it and printed when it closes), plain lines
// on stderr otherwise, none when quiet. restore gives the terminal's input
// echo back (the live display hushes it); it may be called again.
func Progress(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, logOut *SwitchWriter, quiet bool) (_ progress.Sink, every time.Duration, restore func()) {
	switch {
	case quiet:
		return nil, 0, func() {}
	case IsTerminal(stdout):
		live := NewLive(stdout, 0)
		prev := logOut.Swap(live.LogWriter())
		// Keys typed during the run are not echoed over the display. An
		// interrupt gives the echo back at once: a third Ctrl-C quits
		// lmbench before the display closes.
		input := func() {}
		if in, ok := stdin.(*os.File); ok && IsTerminal(in) {
			input = HushInput(in)
		}
		stop := context.AfterFunc(ctx, input)
		return &LiveSink{Live: live, restore: func() {
			logOut.Swap(prev)
			stop()
			input()
		}}, time.Second, input
	}
	return progress.Plain(stderr), plainProgressEvery, func() {}
}

// LiveSink is the live display as a run's progress sink. It hands the log back to stderr when the display closes: the
// display is erased and its held log lines printed first (log lines
// written meanwhile pass straight through a closed Live), so no line can
// land on the frame or come out of order. Close may be called again.
type LiveSink struct {
	*Live
	restore func()
}

// Close closes the display and gives the log and the input echo back.
func (l *LiveSink) Close() {
	l.Live.Close()
	l.restore()
}

// Banner prints the workload's configuration banner (spec §2.6).
func Banner(w io.Writer, cr protocol.Configured, color bool) {
	bold, cyan, yellow, reset := "\033[1m", "\033[96m", "\033[93m", "\033[0m"
	if !color {
		bold, cyan, yellow, reset = "", "", "", ""
	}
	var b strings.Builder
	b.WriteString(bold + strings.Repeat("═", 50) + reset + "\n")
	b.WriteString(" Workload: " + cyan + cr.Title + reset + "\n")
	b.WriteString(bold + strings.Repeat("─", 50) + reset + "\n")
	width := 0
	for _, f := range cr.Banner {
		width = max(width, len(f.Label)+1)
	}
	for _, f := range cr.Banner {
		fmt.Fprintf(&b, "  %-*s %s%s%s\n", width, f.Label+":", yellow, f.Value, reset)
	}
	b.WriteString(bold + strings.Repeat("═", 50) + reset + "\n")
	io.WriteString(w, b.String())
}

// NewLiveSink is l as a progress sink that calls restore once it closes.
func NewLiveSink(l *Live, restore func()) *LiveSink { return &LiveSink{Live: l, restore: restore} }
