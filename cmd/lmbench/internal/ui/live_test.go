package ui

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/bench"
)

func measureSnap() bench.Snapshot {
	return bench.Snapshot{
		Phase: bench.PhaseMeasure, Elapsed: 65*time.Second + 400*time.Millisecond,
		Done: 12, Failed: 2, InFlight: 3, Planned: 40,
		MeanTTFTMs: 85.14, MeanDecodeSpeed: 41.23, InputThroughput: 9512.4, OutputThroughput: 310.2,
		DispatchLagP50Ms: 1.24, DispatchLagP99Ms: 4.01,
	}
}

func frameText(t *testing.T, width int, s bench.Snapshot, logs ...string) string {
	t.Helper()
	scr := newScreen(t)
	l := NewLive(scr, width)
	for _, lg := range logs {
		fmt.Fprintln(l.LogWriter(), lg)
	}
	l.Update(s)
	return strings.Join(scr.text(), "\n")
}

func TestLiveFrameContent(t *testing.T) {
	t.Parallel()
	noLag := measureSnap()
	noLag.DispatchLagP50Ms, noLag.DispatchLagP99Ms = math.NaN(), math.NaN()
	warmup := bench.Snapshot{Phase: bench.PhaseWarmup, Elapsed: 3 * time.Second, Done: 1, InFlight: 2,
		DispatchLagP50Ms: math.NaN(), DispatchLagP99Ms: math.NaN()}
	tests := []struct {
		name      string
		snap      bench.Snapshot
		want, not []string
	}{
		{
			name: "measure with schedule", snap: measureSnap(),
			want: []string{"measure", "elapsed 1:05", "done 12/40", " 30%", "failed 2", "in-flight 3",
				"mean TTFT 85.1 ms", "decode 41.2 tok/s", "in 9512 tok/s", "out 310 tok/s",
				"dispatch lag p50/p99 1.2/4.0 ms"},
		},
		{
			name: "measure without schedule", snap: noLag,
			want: []string{"done 12/40", "mean TTFT 85.1 ms"},
			not:  []string{"dispatch lag"},
		},
		{
			name: "warmup, total unknown", snap: warmup,
			want: []string{"warmup", "elapsed 0:03", "done 1 ", "failed 0", "in-flight 2"},
			not:  []string{"done 1/", "%", "TTFT", "tok/s", "recent log"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := frameText(t, 200, tt.snap)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("frame lacks %q:\n%s", w, got)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("frame has %q:\n%s", n, got)
				}
			}
		})
	}
}

// Every Update replaces the previous frame: the screen never holds more
// than one.
func TestLiveRedrawsInPlace(t *testing.T) {
	t.Parallel()
	scr := newScreen(t)
	l := NewLive(scr, 100)
	var last []string
	for i := range 10 {
		s := measureSnap()
		s.Done = i
		l.Update(s)
		last = scr.text()
	}
	if n := strings.Count(strings.Join(last, "\n"), "in-flight"); n != 1 {
		t.Fatalf("screen holds %d frames, want 1:\n%s", n, strings.Join(last, "\n"))
	}
	if !strings.Contains(last[0], "done 9/40") {
		t.Errorf("first line %q does not show the latest snapshot", last[0])
	}
	if want := strings.Split(frameText(t, 100, func() bench.Snapshot { s := measureSnap(); s.Done = 9; return s }()), "\n"); !cmp.Equal(want, last) {
		t.Errorf("screen after 10 updates differs from a single frame (-want +got):\n%s", cmp.Diff(want, last))
	}
}

// Log lines appear above the display, in order, each once; the display
// keeps the last five; Close leaves exactly the log lines, and what is
// printed next (the summary) follows them.
func TestLiveLogLinesAndClose(t *testing.T) {
	t.Parallel()
	scr := newScreen(t)
	l := NewLive(scr, 100)
	w := l.LogWriter()
	var logs []string
	for i := range 7 {
		line := fmt.Sprintf("log line %d", i)
		logs = append(logs, line)
		if i == 3 { // a line arriving in pieces is printed once complete
			_, _ = io.WriteString(w, "log li")
			s := measureSnap()
			l.Update(s)
			if strings.Contains(strings.Join(scr.text(), "\n"), "log li\n") {
				t.Errorf("an incomplete log line was printed:\n%s", strings.Join(scr.text(), "\n"))
			}
			_, _ = io.WriteString(w, "ne 3\n")
		} else {
			_, _ = io.WriteString(w, line+"\n")
		}
		s := measureSnap()
		s.Done = i
		l.Update(s)
	}

	got := scr.text()
	above := got[:7]
	if !cmp.Equal(logs, above) {
		t.Errorf("log lines above the display (-want +got):\n%s", cmp.Diff(logs, above))
	}
	frame := got[7:]
	var tail []string
	for i, f := range frame {
		if strings.Contains(f, "recent log") {
			tail = frame[i+1:]
		}
	}
	if want := logs[2:]; !cmp.Equal(want, tail) {
		t.Errorf("the display's last %d log lines (-want +got):\n%s", LogLines, cmp.Diff(want, tail))
	}

	l.Close()
	if diff := cmp.Diff(logs, scr.text()); diff != "" {
		t.Errorf("after Close the screen holds more than the log lines (-want +got):\n%s", diff)
	}
	_, _ = io.WriteString(w, "after close\n")
	l.Update(measureSnap()) // ignored once closed
	l.Close()               // idempotent
	_, _ = io.WriteString(scr, "SUMMARY\n")
	want := append(append([]string{}, logs...), "after close", "SUMMARY")
	if diff := cmp.Diff(want, scr.text()); diff != "" {
		t.Errorf("output after Close (-want +got):\n%s", diff)
	}
}

// Close prints an incomplete log line rather than dropping it.
func TestLiveCloseFlushesPartialLogLine(t *testing.T) {
	t.Parallel()
	scr := newScreen(t)
	l := NewLive(scr, 80)
	l.Update(measureSnap())
	_, _ = io.WriteString(l.LogWriter(), "no newline yet")
	l.Close()
	if diff := cmp.Diff([]string{"no newline yet"}, scr.text()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// No line of the display reaches the last column, whatever the width, so
// the terminal never wraps one and the redraw always covers the frame;
// log lines stay whole above it.
func TestLiveFitsWidth(t *testing.T) {
	t.Parallel()
	long := "\x1b[31mERR\x1b[0m\t" + strings.Repeat("very long log message ", 10)
	above := "ERR     " + strings.TrimSpace(strings.Repeat("very long log message ", 10)) // the tab stops at column 8
	for _, width := range []int{30, 60, 80, 132} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			t.Parallel()
			scr := newScreen(t)
			l := NewLive(scr, width)
			fmt.Fprintln(l.LogWriter(), long)
			l.Update(measureSnap())
			lines := scr.text()
			if lines[0] != above {
				t.Errorf("log line above the display = %q, want it whole", lines[0])
			}
			for _, line := range lines[1:] {
				if w := ansi.StringWidth(line); w >= width {
					t.Errorf("line is %d columns wide on a %d-column terminal: %q", w, width, line)
				}
			}
			if last := lines[len(lines)-1]; !strings.HasSuffix(last, "…") {
				t.Errorf("the long log line was not shortened in the display: %q", last)
			}
		})
	}
}

// Width 0 on something that is not a terminal falls back to 80 columns.
func TestLiveFallbackWidth(t *testing.T) {
	t.Parallel()
	var raw bytes.Buffer
	l := NewLive(&raw, 0)
	fmt.Fprintln(l.LogWriter(), strings.Repeat("x", 200))
	raw.Reset()
	l.Update(measureSnap())
	for line := range strings.SplitSeq(strings.TrimSuffix(raw.String(), "\n"), "\n") {
		if w := ansi.StringWidth(strings.TrimPrefix(line, "\r")); w > fallbackWidth-1 {
			t.Errorf("line is %d columns wide, want at most %d: %q", w, fallbackWidth-1, line)
		}
	}
}

// Snapshots and log lines from different goroutines never interleave
// inside an escape sequence or a line.
func TestLiveConcurrent(t *testing.T) {
	t.Parallel()
	scr := newScreen(t)
	l := NewLive(scr, 100)
	var wg sync.WaitGroup
	var logs []string
	for i := range 50 {
		logs = append(logs, fmt.Sprintf("message %02d", i))
	}
	wg.Go(func() {
		for _, m := range logs {
			fmt.Fprintln(l.LogWriter(), m)
		}
	})
	wg.Go(func() {
		for i := range 50 {
			s := measureSnap()
			s.Done = i
			l.Update(s)
		}
	})
	wg.Wait()
	l.Close()
	if diff := cmp.Diff(logs, scr.text()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestClock(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0: "0:00", 999 * time.Millisecond: "0:00", 61 * time.Second: "1:01", 3*time.Hour + 2*time.Minute + 5*time.Second: "3:02:05",
	} {
		if got := clock(d); got != want {
			t.Errorf("clock(%v) = %q, want %q", d, got, want)
		}
	}
}

// BenchmarkLiveUpdate is the cost of one redraw with a full log tail.
func BenchmarkLiveUpdate(b *testing.B) {
	l := NewLive(io.Discard, 120)
	for i := range LogLines {
		fmt.Fprintf(l.LogWriter(), "\x1b[90m12:00:0%d\x1b[0m \x1b[32mINF\x1b[0m request finished id=%d\n", i, i)
	}
	s := measureSnap()
	b.ReportAllocs()
	for b.Loop() {
		l.Update(s)
	}
}

// BenchmarkLiveLogLine is the cost of one log line while the display is up.
func BenchmarkLiveLogLine(b *testing.B) {
	l := NewLive(io.Discard, 120)
	l.Update(measureSnap())
	line := []byte("\x1b[90m12:00:00\x1b[0m \x1b[32mINF\x1b[0m request finished id=1\n")
	w := l.LogWriter()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = w.Write(line)
	}
}
