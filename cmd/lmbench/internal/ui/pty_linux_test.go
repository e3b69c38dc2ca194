//go:build linux

package ui

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal of cols×rows: the test writes keys to
// and reads the screen from master; the code under test gets slave, a
// real terminal (raw mode, window size and all).
func openPTY(t *testing.T, cols, rows uint16) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { _ = master.Close() })
	var n int
	ctl := func(fd uintptr) {
		if err = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); err == nil {
			n, err = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
		}
	}
	if rc, cerr := master.SyscallConn(); cerr != nil {
		t.Fatal(cerr)
	} else if cerr := rc.Control(ctl); cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil {
		t.Fatalf("unlocking the pseudo-terminal: %v", err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = slave.Close() })
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: rows}); err != nil {
		t.Fatal(err)
	}
	return master, slave
}

func lflag(t *testing.T, f *os.File) uint32 {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return tio.Lflag
}

// The guided setup on a real terminal: raw mode (Enter arrives as CR, no
// echo from the terminal itself), the window size, and the terminal left
// as it was found.
func TestSetupOnPseudoTerminal(t *testing.T) {
	t.Parallel()
	master, slave := openPTY(t, 100, 30)
	before := lflag(t, slave)
	if before&unix.ECHO == 0 || before&unix.ICANON == 0 {
		t.Fatalf("a new terminal should echo and be line-buffered, lflag %#x", before)
	}

	c := &console{t: t, in: master, done: make(chan setupResult, 1)}
	go func() { _, _ = io.Copy(c, master) }()
	var loaded []string
	go func() {
		o, err := RunSetup(context.Background(), slave, slave, testSetup(&loaded))
		c.done <- setupResult{o, err}
	}()

	c.expect("Engine URL")
	c.send("http://engine:8000", keyEnter)
	c.expect("Workload")
	c.send(keyDown, keyEnter)
	c.expect("LMCache server")
	c.send("n")
	c.expect("Tokens per GB KV cache")
	c.send("6553", keyEnter)
	c.expect("General settings")
	c.send(keyEnter)
	c.expect("Workload settings (random-prefill)")
	c.send(keyEnter)
	c.expect("What would you like to do?")
	c.send(keyEnter)
	r := c.result()
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.o.Action != ActionStart || r.o.Workload != "random-prefill" ||
		r.o.Values["engine_url"] != "http://engine:8000" || r.o.Values[KeyTokensPerGB] != "6553" {
		t.Errorf("outcome = %+v", r.o)
	}
	if after := lflag(t, slave); after != before {
		t.Errorf("terminal mode not restored: lflag %#x, was %#x", after, before)
	}
}

// On a real terminal the display takes its width from the terminal.
func TestLiveOnPseudoTerminal(t *testing.T) {
	t.Parallel()
	master, slave := openPTY(t, 60, 24)
	scr := newScreen(t)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(scr, master)
	}()
	l := NewLive(slave, 0)
	logAt(t, l, zerolog.InfoLevel, "first log line")
	logAt(t, l, zerolog.WarnLevel, "a warning")
	l.Update(measureSnap())
	frame := scr.waitFor(t, "recent log")
	l.Close()
	_, _ = io.WriteString(slave, "SUMMARY\n")
	got := scr.waitFor(t, "SUMMARY")
	_ = slave.Close() // ends the copy
	<-copied

	rule := ""
	for _, line := range frame {
		if strings.Contains(line, "recent log") {
			rule = line
		}
	}
	if w := len([]rune(rule)); w != 59 {
		t.Errorf("the frame is %d columns wide on a 60-column terminal, want 59:\n%s", w, strings.Join(frame, "\n"))
	}
	if above, box := split(frame); !cmp.Equal(above, []string{"a warning"}) || !cmp.Equal(box, []string{"first log line", "a warning"}) {
		t.Errorf("while the display is up: above %q, in the box %q", above, box)
	}
	if diff := cmp.Diff([]string{"a warning", "first log line", "SUMMARY"}, got); diff != "" {
		t.Errorf("screen after Close (-want +got):\n%s", diff)
	}
}
