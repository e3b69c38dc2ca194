package abort

import (
	"strings"
	"testing"
)

// The policy stops at the n-th refused connection in a row, not before,
// and a success in between starts the count again.
func TestStateConnectionFailuresInARow(t *testing.T) {
	t.Parallel()
	s := NewState(Policy{ConnectionFailures: 3})
	refused := "Post \"http://h/v1/chat/completions\": dial tcp 127.0.0.1:1: connect: connection refused"
	steps := []struct {
		ok   bool
		stop bool
	}{{true, false}, {false, false}, {false, false}, {true, false}, {false, false}, {false, false}, {false, true}}
	for i, st := range steps {
		msg := ""
		if !st.ok {
			msg = refused
		}
		c := s.Observe("r", st.ok, msg)
		if (c != nil) != st.stop {
			t.Fatalf("request %d: cause %v, want stop %v", i, c, st.stop)
		}
		if c != nil && (c.Title != "engine unreachable" || !strings.Contains(c.Reason, "3 requests in a row")) {
			t.Errorf("cause %+v", c)
		}
	}
}

// The failure rate is judged only over a full window.
func TestStateFailureRate(t *testing.T) {
	t.Parallel()
	s := NewState(Policy{FailureRate: 0.5, Window: 4})
	if c := s.Observe("a", false, "HTTP 500: boom"); c != nil {
		t.Fatalf("stopped on the first failure: %v", c)
	}
	s.Observe("b", true, "")
	s.Observe("c", true, "")
	c := s.Observe("d", false, "HTTP 500: boom")
	if c == nil || c.Title != "too many failures" || !strings.HasPrefix(c.Reason, "2 of the last 4 requests failed") {
		t.Fatalf("cause %+v", c)
	}
}

func TestRedactKey(t *testing.T) {
	t.Parallel()
	if got := RedactKey("bad key sk-123 sent", "sk-123"); strings.Contains(got, "sk-123") {
		t.Errorf("RedactKey kept the key: %q", got)
	}
	if got := RedactKey("no key here", ""); got != "no key here" {
		t.Errorf("RedactKey with no key: %q", got)
	}
}
