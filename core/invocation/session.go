package invocation

import (
	"slices"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/pluginset"
)

// Exit codes of a run (and of each point of a sweep).
const (
	ExitOK          = 0
	ExitFailed      = 1 // a measured request failed, the run was aborted, or an error
	ExitUsage       = 2
	ExitQuit        = 3 // quit at once by a third Ctrl-C: rebuild the files from the journal
	ExitInterrupted = 130
)

// Session is one lmbench command: its logger, the plugins it started
// (each once: a run resolves again after the guided setup) and what else
// it started (the built-in engine); Close stops them all.
type Session struct {
	Log     zerolog.Logger
	Plugins *pluginset.Plugins // nil until the logger is known
	// NewLog builds the logger from the level and format the first pass
	// read, when SetLog was not called first.
	NewLog  func(level, format string) (zerolog.Logger, error)
	version string
	hasLog  bool
	closers []func()
	// journal is the running benchmark's journal, for a third Ctrl-C's
	// message (nil until the run starts); set and read on other goroutines.
	journal *atomic.Pointer[string]
}

// New returns a session of lmbench version; newLog builds its logger once
// the first pass knows the level and format.
func New(version string, newLog func(level, format string) (zerolog.Logger, error)) *Session {
	return &Session{Log: zerolog.Nop(), NewLog: newLog, version: version, journal: new(atomic.Pointer[string])}
}

// SetLog sets the session's logger, once, and the plugin set that logs
// to it.
func (s *Session) SetLog(log zerolog.Logger) {
	s.Log, s.hasLog = log, true
	s.Plugins = pluginset.NewPlugins(log, s.version)
}

// OnClose has Close call f (last added, first called).
func (s *Session) OnClose(f func()) { s.closers = append(s.closers, f) }

// Close stops everything the session started.
func (s *Session) Close() {
	for _, c := range slices.Backward(s.closers) {
		c()
	}
	s.closers = nil
	if s.Plugins != nil {
		s.Plugins.Close()
	}
}

// Journal is the journal of the run under way ("" before one starts).
func (s *Session) Journal() string {
	if j := s.journal.Load(); j != nil {
		return *j
	}
	return ""
}

// child is a session with s's logger and journal, and plugins of its
// own: a sweep's point, whose plugins stop when it ends.
func (s *Session) child() *Session {
	c := New(s.version, s.NewLog)
	c.SetLog(s.Log)
	c.journal = s.journal
	return c
}
