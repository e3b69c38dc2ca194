package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ptySlave opens a pseudo-terminal and returns its terminal end (the
// master end is drained so the display can write).
func ptySlave(t *testing.T) *os.File {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { _ = master.Close() })
	var n int
	rc, err := master.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if cerr := rc.Control(func(fd uintptr) {
		if err = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); err == nil {
			n, err = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
		}
	}); cerr != nil || err != nil {
		t.Fatalf("unlocking the pseudo-terminal: %v %v", cerr, err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = slave.Close() })
	go io.Copy(io.Discard, master)
	return slave
}

func echoes(t *testing.T, f *os.File) bool {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return tio.Lflag&unix.ECHO != 0
}

// With the live display on a terminal, typed keys are not echoed over it;
// the echo comes back when the display closes, and at once on an
// interrupt (a second Ctrl-C kills lmbench before the display closes), and
// when the session ends however it ends.
func TestLiveDisplayHushesInput(t *testing.T) {
	for _, how := range []string{"close", "interrupt", "session end"} {
		t.Run(how, func(t *testing.T) {
			tty := ptySlave(t)
			s := newSession(tty, tty, io.Discard)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sink, _ := s.display(nil).Progress(ctx, false)
			if sink == nil || echoes(t, tty) {
				t.Fatalf("sink %v, echo on during the live display", sink)
			}
			if how == "session end" {
				// The run failed before the display was opened and closed.
				s.Close()
				if !echoes(t, tty) {
					t.Error("echo still off after the session ended")
				}
				return
			}
			if how == "close" {
				sink.Close()
				if !echoes(t, tty) {
					t.Error("echo still off after the display closed")
				}
				return
			}
			defer sink.Close()
			cancel()
			deadline := time.Now().Add(5 * time.Second)
			for !echoes(t, tty) {
				if time.Now().After(deadline) {
					t.Fatal("echo still off 5s after the interrupt")
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
}
