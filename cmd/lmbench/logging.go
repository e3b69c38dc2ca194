package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/term"
)

// isTerminal reports whether f is an *os.File attached to a terminal
// (/dev/null and pipes are not).
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// newLogger builds the process logger on out. format is "console"
// (human-readable), "json", or "auto": console when tty, else JSON.
func newLogger(out io.Writer, level, format string, tty bool) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Logger{}, usageError{fmt.Errorf("--log-level: expected trace, debug, info, warn or error, got %q", level)}
	}
	zerolog.TimeFieldFormat = time.RFC3339Nano // main owns zerolog's globals
	switch format {
	case "auto", "":
		if tty {
			format = "console"
		} else {
			format = "json"
		}
	case "console", "json":
	default:
		return zerolog.Logger{}, usageError{fmt.Errorf("--log-format: expected auto, console or json, got %q", format)}
	}
	w := out
	if format == "console" {
		w = zerolog.ConsoleWriter{Out: out, NoColor: !tty, TimeFormat: "15:04:05.000"}
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

// switchWriter is the log destination: stderr, or the live display's log
// area while it is on screen, so log lines never tear the display.
type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// swap sets the destination and returns the previous one.
func (s *switchWriter) swap(w io.Writer) io.Writer {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.w
	s.w = w
	return old
}
