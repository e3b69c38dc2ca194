package ui

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// screen is a minimal terminal for the tests: an unbounded list of lines
// and a cursor. It understands what a terminal does with the output of
// Live: printable text, "\n" (a tty's default output processing turns it
// into CR LF), "\r", "\t" (stops every 8 columns), CSI n A (cursor up), CSI J (erase below), CSI K
// (erase line) and SGR (ignored). Any other escape sequence fails the test,
// so the display cannot start relying on one without the test noticing.
type screen struct {
	t        *testing.T
	mu       sync.Mutex
	lines    [][]rune
	row, col int
	pending  []byte // an incomplete escape sequence or UTF-8 rune
}

func newScreen(t *testing.T) *screen { return &screen{t: t, lines: [][]rune{nil}} }

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data := append(s.pending, p...)
	s.pending = nil
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case c == '\n':
			s.row++
			s.col = 0
			for len(s.lines) <= s.row {
				s.lines = append(s.lines, nil)
			}
			i++
		case c == '\r':
			s.col = 0
			i++
		case c == '\t':
			next := (s.col/8 + 1) * 8
			line := s.lines[s.row]
			for len(line) < next {
				line = append(line, ' ')
			}
			s.lines[s.row] = line
			s.col = next
			i++
		case c == 0x1b:
			n, ok := s.escape(data[i:])
			if !ok {
				s.pending = append([]byte(nil), data[i:]...)
				return len(p), nil
			}
			i += n
		default:
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && !utf8.FullRune(data[i:]) {
				s.pending = append([]byte(nil), data[i:]...)
				return len(p), nil
			}
			line := s.lines[s.row]
			for len(line) <= s.col {
				line = append(line, ' ')
			}
			line[s.col] = r
			s.lines[s.row] = line
			s.col++
			i += n
		}
	}
	return len(p), nil
}

// escape handles the sequence at the start of b; ok is false when it is
// incomplete.
func (s *screen) escape(b []byte) (n int, ok bool) {
	if len(b) < 2 {
		return 0, false
	}
	if b[1] != '[' {
		s.t.Errorf("unexpected escape sequence %q", b[:2])
		return 2, true
	}
	j := 2
	for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == ';') {
		j++
	}
	if j == len(b) {
		return 0, false
	}
	arg := string(b[2:j])
	switch b[j] {
	case 'A':
		k := 1
		if arg != "" {
			k, _ = strconv.Atoi(arg)
		}
		s.row = max(s.row-k, 0)
	case 'J':
		if arg != "" && arg != "0" {
			s.t.Errorf("unexpected erase mode %q", arg)
		}
		s.lines = s.lines[:s.row+1]
		if len(s.lines[s.row]) > s.col {
			s.lines[s.row] = s.lines[s.row][:s.col]
		}
	case 'K':
		if len(s.lines[s.row]) > s.col {
			s.lines[s.row] = s.lines[s.row][:s.col]
		}
	case 'm': // colours and attributes do not move anything
	default:
		s.t.Errorf("unexpected escape sequence %q", b[:j+1])
	}
	return j + 1, true
}

// text returns the screen's lines with trailing blanks trimmed and the
// empty line under the cursor dropped.
func (s *screen) text() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range s.lines {
		out = append(out, strings.TrimRight(string(l), " "))
	}
	if n := len(out); n > 0 && out[n-1] == "" && s.row == n-1 {
		out = out[:n-1]
	}
	return out
}

// waitFor returns the screen once a line contains text.
func (s *screen) waitFor(t *testing.T, text string) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		lines := s.text()
		for _, l := range lines {
			if strings.Contains(l, text) {
				return lines
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for %q on the screen:\n%s", text, strings.Join(lines, "\n"))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestScreenEmulation(t *testing.T) {
	s := newScreen(t)
	_, _ = s.Write([]byte("one\ntwo\nthree\n\r\x1b[2A\x1b[Jfour\x1b[31m!\x1b[0m\n"))
	got := strings.Join(s.text(), "|")
	if want := "one|four!"; got != want {
		t.Errorf("screen = %q, want %q", got, want)
	}
}
