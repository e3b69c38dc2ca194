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
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/progress"
)

func measureSnap() progress.Snapshot {
	return progress.Snapshot{
		Phase: progress.PhaseMeasure, Elapsed: 65*time.Second + 400*time.Millisecond,
		Done: 12, Failed: 2, InFlight: 3, Planned: 40,
		MeanTTFTMs: 85.14, MeanDecodeSpeed: 41.23, InputThroughput: 9512.4, OutputThroughput: 310.2,
		DispatchLagP50Ms: 1.24, DispatchLagP99Ms: 4.01,
	}
}

func frameText(t *testing.T, width int, s progress.Snapshot, logs ...string) string {
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
	warmup := progress.Snapshot{Phase: progress.PhaseWarmup, Elapsed: 3 * time.Second, Done: 1, InFlight: 2,
		DispatchLagP50Ms: math.NaN(), DispatchLagP99Ms: math.NaN()}
	tests := []struct {
		name      string
		snap      progress.Snapshot
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
	if want := strings.Split(frameText(t, 100, func() progress.Snapshot { s := measureSnap(); s.Done = 9; return s }()), "\n"); !cmp.Equal(want, last) {
		t.Errorf("screen after 10 updates differs from a single frame (-want +got):\n%s", cmp.Diff(want, last))
	}
}

// logAt writes one log line at level, as zerolog does.
func logAt(t *testing.T, l *Live, level zerolog.Level, line string) {
	t.Helper()
	lw, ok := l.LogWriter().(zerolog.LevelWriter)
	if !ok {
		t.Fatal("LogWriter is not a zerolog.LevelWriter")
	}
	if _, err := lw.WriteLevel(level, []byte(line+"\n")); err != nil {
		t.Fatal(err)
	}
}

// split returns the lines above the frame and the frame's log box (the
// lines after its "recent log" rule); no frame means everything is above.
func split(lines []string) (above, box []string) {
	start := len(lines)
	for i, line := range lines {
		if strings.Contains(line, "elapsed ") {
			start = i
			break
		}
	}
	for i, line := range lines[start:] {
		if strings.Contains(line, "recent log") {
			box = lines[start+i+1:]
		}
	}
	return lines[:start], box
}

// checkOnce fails when a non-empty line appears more than once.
func checkOnce(t *testing.T, lines []string) {
	t.Helper()
	seen := map[string]int{}
	for _, line := range lines {
		if line != "" {
			seen[line]++
		}
	}
	for line, n := range seen {
		if n > 1 {
			t.Errorf("%q appears %d times:\n%s", line, n, strings.Join(lines, "\n"))
		}
	}
}

// While the display is up, warnings and errors are printed above it at
// once and other lines only appear in its box (the last five of all);
// Close replaces the frame with every held line, in order, so each line
// ends up on the screen exactly once, and the summary follows them.
func TestLiveLogLinesAndClose(t *testing.T) {
	t.Parallel()
	scr := newScreen(t)
	_, _ = io.WriteString(scr, "BANNER\n")
	l := NewLive(scr, 100)
	w := l.LogWriter()
	var (
		logged []string // every line, in the order logged
		held   []string // the lines below warning level
		urgent []string // warnings and errors
	)
	check := func(when string) {
		t.Helper()
		above, box := split(scr.text())
		if want := append([]string{"BANNER"}, urgent...); !cmp.Equal(want, above) {
			t.Errorf("%s: above the display (-want +got):\n%s", when, cmp.Diff(want, above))
		}
		if want := logged[max(len(logged)-LogLines, 0):]; !cmp.Equal(want, box) {
			t.Errorf("%s: the display's log box (-want +got):\n%s", when, cmp.Diff(want, box))
		}
	}
	l.Update(measureSnap())
	for i := range 9 {
		line := fmt.Sprintf("12:00:0%d INF log line %d", i, i)
		switch i {
		case 2: // a plain Write has no level: held
			_, _ = io.WriteString(w, line+"\n")
		case 3: // a line arriving in pieces counts once complete
			_, _ = io.WriteString(w, line[:10])
			l.Update(measureSnap())
			if got := strings.Join(scr.text(), "\n"); strings.Contains(got, line[:10]) {
				t.Errorf("an incomplete log line was shown:\n%s", got)
			}
			_, _ = io.WriteString(w, line[10:]+"\n")
		case 4:
			line = "12:00:04 DBG a debug line"
			logAt(t, l, zerolog.DebugLevel, line)
		case 5:
			line = "12:00:05 WRN disk almost full"
			logAt(t, l, zerolog.WarnLevel, line)
		case 7:
			line = "12:00:07 ERR request failed"
			logAt(t, l, zerolog.ErrorLevel, line)
		default:
			logAt(t, l, zerolog.InfoLevel, line)
		}
		logged = append(logged, line)
		if strings.Contains(line, "WRN") || strings.Contains(line, "ERR") {
			urgent = append(urgent, line)
		} else {
			held = append(held, line)
		}
		check(fmt.Sprintf("right after line %d", i)) // no Update needed to show a line
		s := measureSnap()
		s.Done = i
		l.Update(s)
		check(fmt.Sprintf("after the update following line %d", i))
	}

	l.Close()
	want := append(append([]string{"BANNER"}, urgent...), held...)
	if diff := cmp.Diff(want, scr.text()); diff != "" {
		t.Errorf("after Close: the warnings, then every other line in order (-want +got):\n%s", diff)
	}
	checkOnce(t, scr.text())
	logAt(t, l, zerolog.InfoLevel, "after close")
	l.Update(measureSnap()) // ignored once closed
	l.Close()               // idempotent
	_, _ = io.WriteString(scr, "SUMMARY\n")
	want = append(want, "after close", "SUMMARY")
	if diff := cmp.Diff(want, scr.text()); diff != "" {
		t.Errorf("output after Close (-want +got):\n%s", diff)
	}
}

// Before the first snapshot there is no frame: held lines wait unseen,
// warnings are printed.
func TestLiveLogBeforeFirstSnapshot(t *testing.T) {
	t.Parallel()
	scr := newScreen(t)
	l := NewLive(scr, 80)
	logAt(t, l, zerolog.InfoLevel, "info")
	logAt(t, l, zerolog.WarnLevel, "warn")
	if diff := cmp.Diff([]string{"warn"}, scr.text()); diff != "" {
		t.Errorf("before the first snapshot (-want +got):\n%s", diff)
	}
	l.Close()
	if diff := cmp.Diff([]string{"warn", "info"}, scr.text()); diff != "" {
		t.Errorf("after Close (-want +got):\n%s", diff)
	}
}

// At most HeldLogLines lines are held: Close prints the newest, then one
// note counting the older ones it dropped. Warnings do not count.
func TestLiveDropsOldestHeldLines(t *testing.T) {
	t.Parallel()
	t.Run("limit", func(t *testing.T) {
		t.Parallel()
		scr := newScreen(t)
		l := NewLive(scr, 100)
		l.Update(measureSnap())
		const extra = 7
		var want []string
		for i := range HeldLogLines + extra {
			line := fmt.Sprintf("line %05d", i)
			if i == HeldLogLines/2 {
				logAt(t, l, zerolog.WarnLevel, "WRN halfway")
			}
			logAt(t, l, zerolog.InfoLevel, line)
			if i >= extra {
				want = append(want, line)
			}
			if i%1000 == 0 {
				l.Update(measureSnap())
			}
		}
		l.Close()
		want = append(append([]string{"WRN halfway"}, want...), "(7 earlier log lines were dropped)")
		got := scr.text()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("one", func(t *testing.T) {
		t.Parallel()
		scr := newScreen(t)
		l := NewLive(scr, 100)
		l.maxHeld = 2
		for _, line := range []string{"a", "b", "c"} {
			logAt(t, l, zerolog.InfoLevel, line)
		}
		l.Close()
		if diff := cmp.Diff([]string{"b", "c", "(1 earlier log line was dropped)"}, scr.text()); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
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
// log lines stay whole above it and after it.
func TestLiveFitsWidth(t *testing.T) {
	t.Parallel()
	long := "\x1b[31mERR\x1b[0m\t" + strings.Repeat("very long log message ", 10)
	above := "ERR     " + strings.TrimSpace(strings.Repeat("very long log message ", 10)) // the tab stops at column 8
	for _, width := range []int{30, 60, 80, 132} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			t.Parallel()
			scr := newScreen(t)
			l := NewLive(scr, width)
			logAt(t, l, zerolog.ErrorLevel, long)
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
			fmt.Fprintln(l.LogWriter(), long) // held, then printed whole at Close
			l.Close()
			if diff := cmp.Diff([]string{above, above}, scr.text()); diff != "" {
				t.Errorf("after Close (-want +got):\n%s", diff)
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
// inside an escape sequence or a line; after Close every line is on the
// screen once: the warnings, then the other lines, each writer's in order.
func TestLiveConcurrent(t *testing.T) {
	t.Parallel()
	scr := newScreen(t)
	l := NewLive(scr, 100)
	lw := l.LogWriter().(zerolog.LevelWriter)
	msgs := func(prefix string) []string {
		var m []string
		for i := range 50 {
			m = append(m, fmt.Sprintf("%s %02d", prefix, i))
		}
		return m
	}
	plain, info, warn := msgs("plain"), msgs("info"), msgs("warn")
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, m := range plain {
			fmt.Fprintln(l.LogWriter(), m)
		}
	})
	wg.Go(func() {
		for _, m := range info {
			_, _ = lw.WriteLevel(zerolog.InfoLevel, []byte(m+"\n"))
		}
	})
	wg.Go(func() {
		for _, m := range warn {
			_, _ = lw.WriteLevel(zerolog.WarnLevel, []byte(m+"\n"))
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
	got := scr.text()
	checkOnce(t, got)
	if len(got) != 150 {
		t.Fatalf("%d lines on the screen, want 150:\n%s", len(got), strings.Join(got, "\n"))
	}
	if diff := cmp.Diff(warn, got[:50]); diff != "" {
		t.Errorf("the warnings first (-want +got):\n%s", diff)
	}
	var gotPlain, gotInfo []string
	for _, line := range got[50:] {
		if strings.HasPrefix(line, "plain") {
			gotPlain = append(gotPlain, line)
		} else {
			gotInfo = append(gotInfo, line)
		}
	}
	if !cmp.Equal(plain, gotPlain) || !cmp.Equal(info, gotInfo) {
		t.Errorf("held lines out of order or lost:\n%s", strings.Join(got[50:], "\n"))
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
