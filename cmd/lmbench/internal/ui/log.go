package ui

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/term"
)

// IsTerminal reports whether f is an *os.File attached to a terminal
// (/dev/null and pipes are not).
func IsTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// NewLogger builds the process logger on out. format is "console"
// (human-readable), "json", or "auto": console when tty, else JSON.
func NewLogger(out io.Writer, level, format string, tty bool) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Logger{}, fmt.Errorf("--log-level: expected trace, debug, info, warn or error, got %q", level)
	}
	zerolog.TimeFieldFormat = time.RFC3339Nano // the process's one logger owns zerolog's globals
	switch format {
	case "auto", "":
		if tty {
			format = "console"
		} else {
			format = "json"
		}
	case "console", "json":
	default:
		return zerolog.Logger{}, fmt.Errorf("--log-format: expected auto, console or json, got %q", format)
	}
	w := out
	if format == "console" {
		w = consoleWriter{zerolog.ConsoleWriter{Out: out, NoColor: !tty, TimeFormat: "15:04:05.000"}}
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

// consoleWriter is zerolog's human-readable writer that hands each
// formatted line on with its level, so a level-aware destination (the
// live display, through [SwitchWriter]) can show warnings at once.
type consoleWriter struct{ zerolog.ConsoleWriter }

func (c consoleWriter) WriteLevel(level zerolog.Level, p []byte) (int, error) {
	var buf bytes.Buffer
	cw := c.ConsoleWriter
	cw.Out = &buf
	if _, err := cw.Write(p); err != nil {
		return 0, err
	}
	if _, err := writeLevel(c.Out, level, buf.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// writeLevel writes p to w with its level when w takes one.
func writeLevel(w io.Writer, level zerolog.Level, p []byte) (int, error) {
	if lw, ok := w.(zerolog.LevelWriter); ok {
		return lw.WriteLevel(level, p)
	}
	return w.Write(p)
}

// SwitchWriter is the log destination: stderr, or the live display's log
// area while it is on screen, so log lines never tear the display.
type SwitchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *SwitchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// WriteLevel passes the level on when the destination takes one.
func (s *SwitchWriter) WriteLevel(level zerolog.Level, p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return writeLevel(s.w, level, p)
}

// Swap sets the destination and returns the previous one.
func (s *SwitchWriter) Swap(w io.Writer) io.Writer {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.w
	s.w = w
	return old
}

// NewSwitchWriter returns a SwitchWriter writing to w.
func NewSwitchWriter(w io.Writer) *SwitchWriter { return &SwitchWriter{w: w} }
