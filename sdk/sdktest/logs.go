package sdktest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"sync"
	"testing"

	"github.com/rs/zerolog"
)

// LogLine is one line a workload logged.
type LogLine struct{ Level, Message string }

// Logs holds what a logger from CaptureLogs wrote.
type Logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// CaptureLogs returns a debug-level logger for Options.Logger and the Logs
// it writes to, so a test can assert what a workload logged.
func CaptureLogs() (*zerolog.Logger, *Logs) {
	l := &Logs{}
	lg := zerolog.New(l).Level(zerolog.DebugLevel)
	return &lg, l
}

// Lines returns every line logged so far, in order.
func (l *Logs) Lines(t testing.TB) []LogLine {
	t.Helper()
	l.mu.Lock()
	data := bytes.Clone(l.buf.Bytes())
	l.mu.Unlock()
	var out []LogLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		lvl, _ := m[zerolog.LevelFieldName].(string)
		msg, _ := m[zerolog.MessageFieldName].(string)
		out = append(out, LogLine{lvl, msg})
	}
	return out
}

// At returns the messages logged at level ("debug", "info", "warn", …).
func (l *Logs) At(t testing.TB, level string) []string {
	t.Helper()
	var out []string
	for _, ln := range l.Lines(t) {
		if ln.Level == level {
			out = append(out, ln.Message)
		}
	}
	return out
}
