package main

import (
	"errors"
	"io"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/ui"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/invocation"
)

// session is one lmbench command (invocation.Session) at the terminal:
// its streams and the switch its log writes through (the guided setup
// and the live display take the log over while they are up).
type session struct {
	*invocation.Session
	stdin          io.Reader
	stdout, stderr io.Writer
	logOut         *ui.SwitchWriter
}

func newSession(stdin io.Reader, stdout, stderr io.Writer) *session {
	s := &session{stdin: stdin, stdout: stdout, stderr: stderr, logOut: ui.NewSwitchWriter(stderr)}
	s.Session = invocation.New(version, func(level, format string) (zerolog.Logger, error) {
		return newLogger(s.logOut, level, format, isTerminal(stderr))
	})
	return s
}

// cliError makes a config.UsageError exit 2, as a mistake on the command line.
func cliError(err error) error {
	var ue config.UsageError
	if errors.As(err, &ue) {
		return usageError{err}
	}
	return err
}
