package main

import (
	"io"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/ui"
)

// isTerminal reports whether f is a terminal (ui.IsTerminal).
func isTerminal(f any) bool { return ui.IsTerminal(f) }

// newLogger is ui.NewLogger; a bad level or format is a usage error.
func newLogger(out io.Writer, level, format string, tty bool) (zerolog.Logger, error) {
	log, err := ui.NewLogger(out, level, format, tty)
	if err != nil {
		return log, usageError{err}
	}
	return log, nil
}
