package ui

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/rs/zerolog"
	"golang.org/x/term"

	"github.com/lmbench/lmbench/core/progress"
)

// LogLines is how many recent log lines the live display keeps.
const LogLines = 5

// HeldLogLines is how many log lines below warning level the display
// holds back while it is up, to print when it closes; older ones are
// dropped and counted.
const HeldLogLines = 10_000

// fallbackWidth is used when the width is neither given nor detectable.
const fallbackWidth = 80

// Escape sequences of the redraw: cursor up n lines and erase from the
// cursor to the end of the screen.
const (
	cursorUpFmt = "\x1b[%dA"
	eraseDown   = "\x1b[J"
)

// Live is the in-place terminal display: redraws about once a second
// (phase, elapsed, done/total, failed, in-flight, mean TTFT, decode speed,
// in/out throughput, dispatch lag when scheduled) and the last 5 log lines.
//
// It is output-only: it moves the cursor up over its previous frame and
// erases it before drawing the next one, so whatever was printed above it
// stays. Log output must go through [Live.LogWriter] while the display is
// active; anything else written to the same terminal would be overwritten.
// How log lines are shown is described in the package documentation.
// Live is safe for concurrent use.
type Live struct {
	mu     sync.Mutex
	out    io.Writer
	width  int  // fixed width; 0 = ask the terminal on every frame
	fd     int  // terminal to ask, -1 = none
	drawn  int  // lines of the frame currently on screen
	closed bool // after Close, log lines pass straight through
	snap   *progress.Snapshot
	// head is the rendered snapshot part of the frame, for headWidth
	// columns; log lines redraw the frame without rendering it again.
	head      []string
	headWidth int
	recent    []string // the last LogLines complete log lines, any level
	// held are the complete lines below warning level, in the order
	// logged, waiting for Close. It grows to 2×maxHeld before the oldest
	// are dropped, so dropping costs O(1) per line.
	held    []string
	maxHeld int
	dropped int    // lines dropped from the front of held
	part    []byte // an incomplete log line
	st      liveStyles
}

var _ progress.Sink = (*Live)(nil)

// NewLive returns a display writing to out. width is the terminal's width
// in columns; with 0 it is read from out when out is a terminal (on every
// frame, so resizes are followed) and is 80 otherwise.
func NewLive(out io.Writer, width int) *Live {
	l := &Live{out: out, width: width, fd: -1, maxHeld: HeldLogLines, st: newLiveStyles(lipgloss.NewRenderer(out))}
	if f, ok := out.(*os.File); ok && width <= 0 && term.IsTerminal(int(f.Fd())) {
		l.fd = int(f.Fd())
	}
	return l
}

// Update redraws the display with s.
func (l *Live) Update(s progress.Snapshot) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.snap, l.head = &s, nil
	var b bytes.Buffer
	l.erase(&b)
	l.draw(&b)
	_, _ = l.out.Write(b.Bytes())
}

// Close erases the display, then prints the log lines it held back (an
// incomplete last line gets a newline), in the order they were logged,
// and a note of how many older ones were dropped, if any: the terminal is
// left clean for the summary. Later log output passes straight through.
// Close is idempotent.
func (l *Live) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	var b bytes.Buffer
	l.erase(&b)
	if len(l.part) > 0 {
		l.hold(string(l.part))
		l.part = nil
	}
	l.trimHeld(l.maxHeld)
	for _, line := range l.held {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	switch {
	case l.dropped == 1:
		b.WriteString(l.st.dim.Render("(1 earlier log line was dropped)") + "\n")
	case l.dropped > 1:
		b.WriteString(l.st.dim.Render(fmt.Sprintf("(%d earlier log lines were dropped)", l.dropped)) + "\n")
	}
	l.closed, l.held, l.recent = true, nil, nil
	_, _ = l.out.Write(b.Bytes())
}

// LogWriter returns the writer log output goes to while the display is
// active. It is a [zerolog.LevelWriter]: lines written with WriteLevel at
// warning level or above are printed above the display at once; all
// other lines, including those from a plain Write, are held back until
// Close. Every line is shown in the display's last 5.
func (l *Live) LogWriter() io.Writer { return logWriter{l} }

type logWriter struct{ l *Live }

var _ zerolog.LevelWriter = logWriter{}

// Write logs p as lines of no particular level: they are held until Close.
func (w logWriter) Write(p []byte) (int, error) { return w.l.writeLog(false, p) }

// WriteLevel logs p at level: warnings and worse are printed at once.
func (w logWriter) WriteLevel(level zerolog.Level, p []byte) (int, error) {
	return w.l.writeLog(urgent(level), p)
}

// urgent reports whether a line at level must reach the terminal at once.
func urgent(level zerolog.Level) bool {
	return level >= zerolog.WarnLevel && level <= zerolog.PanicLevel
}

// writeLog takes log output. Only complete lines count; an incomplete one
// waits for the write that completes it and takes that write's urgency.
func (l *Live) writeLog(now bool, p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return l.out.Write(p)
	}
	data := append(l.part, p...)
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		l.part = data
		return len(p), nil
	}
	complete := data[:end+1]
	l.part = append([]byte(nil), data[end+1:]...)
	for line := range strings.SplitSeq(strings.TrimSuffix(string(complete), "\n"), "\n") {
		line = strings.TrimRight(line, "\r")
		l.recent = append(l.recent, line)
		if !now {
			l.hold(line)
		}
	}
	if n := len(l.recent); n > LogLines {
		l.recent = append(l.recent[:0:0], l.recent[n-LogLines:]...)
	}
	if !now && l.snap == nil {
		return len(p), nil // no frame on screen to refresh
	}
	var b bytes.Buffer
	l.erase(&b)
	if now {
		b.Write(complete)
	}
	l.draw(&b)
	if _, err := l.out.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// hold keeps a line for Close, dropping the oldest once twice the limit
// is reached.
func (l *Live) hold(line string) {
	l.held = append(l.held, line)
	if len(l.held) >= 2*max(l.maxHeld, 1) {
		l.trimHeld(l.maxHeld)
	}
}

// trimHeld drops all but the last n held lines, counting them.
func (l *Live) trimHeld(n int) {
	if extra := len(l.held) - n; extra > 0 {
		l.dropped += extra
		l.held = append(l.held[:0:0], l.held[extra:]...)
	}
}

// erase appends what removes the frame on screen; the cursor ends where
// the frame's first line was.
func (l *Live) erase(b *bytes.Buffer) {
	if l.drawn == 0 {
		return
	}
	b.WriteByte('\r')
	fmt.Fprintf(b, cursorUpFmt, l.drawn)
	b.WriteString(eraseDown)
	l.drawn = 0
}

// draw appends the frame for the latest snapshot (nothing before the
// first one), each line ending in a newline.
func (l *Live) draw(b *bytes.Buffer) {
	if l.snap == nil {
		return
	}
	width := l.currentWidth()
	if l.head == nil || l.headWidth != width {
		l.head, l.headWidth = l.renderHead(*l.snap, width), width
	}
	lines := append(slices.Clip(l.head), l.renderLogs(width)...)
	for _, line := range lines {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	l.drawn = len(lines)
}

func (l *Live) currentWidth() int {
	if l.width > 0 {
		return l.width
	}
	if l.fd >= 0 {
		if w, _, err := term.GetSize(l.fd); err == nil && w > 0 {
			return w
		}
	}
	return fallbackWidth
}

type liveStyles struct {
	phase, label, value, bad, dim, barDone, barTodo lipgloss.Style
}

func newLiveStyles(r *lipgloss.Renderer) liveStyles {
	return liveStyles{
		phase:   r.NewStyle().Bold(true).Foreground(lipgloss.Color("0")).Background(lipgloss.Color("6")).Padding(0, 1),
		label:   r.NewStyle().Faint(true),
		value:   r.NewStyle().Bold(true),
		bad:     r.NewStyle().Bold(true).Foreground(lipgloss.Color("1")),
		dim:     r.NewStyle().Faint(true),
		barDone: r.NewStyle().Foreground(lipgloss.Color("6")),
		barTodo: r.NewStyle().Faint(true),
	}
}

// frameWidth is the widest a frame line may be on a terminal width
// columns wide: a line filling the last column would make some terminals
// wrap, and the redraw would then miss a line.
func frameWidth(width int) int { return max(width-1, 20) }

// renderHead lays out a snapshot in lines no wider than frameWidth.
func (l *Live) renderHead(s progress.Snapshot, width int) []string {
	st := l.st
	maxW := frameWidth(width)
	kv := func(label, value string) string { return st.label.Render(label) + " " + st.value.Render(value) }

	failed := st.value.Render(fmt.Sprint(s.Failed))
	if s.Failed > 0 {
		failed = st.bad.Render(fmt.Sprint(s.Failed))
	}
	done := fmt.Sprint(s.Done)
	if s.Planned > 0 {
		done += "/" + fmt.Sprint(s.Planned)
	}
	cells := []string{
		st.phase.Render(s.Phase),
		kv("elapsed", clock(s.Elapsed)),
		kv("done", done),
	}
	if s.Planned > 0 {
		cells = append(cells, l.bar(s.Done, s.Planned, 20))
	}
	cells = append(cells,
		st.label.Render("failed")+" "+failed,
		kv("in-flight", fmt.Sprint(s.InFlight)),
	)
	lines := flow(cells, maxW)

	if s.Phase == progress.PhaseMeasure || s.Phase == progress.PhaseDraining {
		metrics := []string{
			kv("mean TTFT", fmt.Sprintf("%.1f ms", s.MeanTTFTMs)),
			kv("decode", fmt.Sprintf("%.1f tok/s", s.MeanDecodeSpeed)),
			kv("in", fmt.Sprintf("%.0f tok/s", s.InputThroughput)),
			kv("out", fmt.Sprintf("%.0f tok/s", s.OutputThroughput)),
		}
		if s.HasDispatchLag() {
			metrics = append(metrics, kv("dispatch lag p50/p99", fmt.Sprintf("%.1f/%.1f ms", s.DispatchLagP50Ms, s.DispatchLagP99Ms)))
		}
		lines = append(lines, flow(metrics, maxW)...)
	}
	for i, line := range lines {
		lines[i] = ansi.Truncate(line, maxW, "…")
	}
	return lines
}

// renderLogs is the log tail of the frame.
func (l *Live) renderLogs(width int) []string {
	if len(l.recent) == 0 {
		return nil
	}
	maxW := frameWidth(width)
	lines := []string{l.st.dim.Render(rule("recent log", maxW))}
	for _, lg := range l.recent {
		// A tab's width is up to the terminal: spaces keep the width known.
		lines = append(lines, ansi.Truncate(strings.ReplaceAll(lg, "\t", "    "), maxW, "…"))
	}
	return lines
}

// bar renders a done/total bar n cells wide with the percentage.
func (l *Live) bar(done, total, n int) string {
	frac := min(float64(done)/float64(total), 1)
	full := int(frac * float64(n))
	return l.st.barDone.Render(strings.Repeat("━", full)) + l.st.barTodo.Render(strings.Repeat("─", n-full)) +
		fmt.Sprintf(" %3.0f%%", frac*100)
}

// flow joins cells with two spaces, starting a new line when the next
// cell would not fit in width columns.
func flow(cells []string, width int) []string {
	var (
		lines []string
		cur   string
	)
	for _, c := range cells {
		switch {
		case cur == "":
			cur = c
		case ansi.StringWidth(cur)+2+ansi.StringWidth(c) <= width:
			cur += "  " + c
		default:
			lines = append(lines, cur)
			cur = c
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// rule is "── title ───…" width columns wide.
func rule(title string, width int) string {
	head := "── " + title + " "
	return head + strings.Repeat("─", max(width-ansi.StringWidth(head), 0))
}

// clock formats d as m:ss, or h:mm:ss from an hour on.
func clock(d time.Duration) string {
	d = d.Truncate(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}
