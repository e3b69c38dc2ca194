package ui

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// HushInput turns the echo off and only the echo; restore brings it back,
// once, and a second call does not undo later changes.
func TestHushInput(t *testing.T) {
	_, slave := openPTY(t, 80, 24)
	before := lflag(t, slave)
	if before&unix.ECHO == 0 {
		t.Fatal("a new pseudo-terminal does not echo")
	}
	restore := HushInput(slave)
	if got := lflag(t, slave); got != before&^unix.ECHO {
		t.Errorf("hushed lflag %#x, want %#x (only ECHO cleared; ICANON and ISIG kept)", got, before&^unix.ECHO)
	}
	restore()
	if got := lflag(t, slave); got != before {
		t.Errorf("restored lflag %#x, want %#x", got, before)
	}
	tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	tio.Lflag &^= unix.ECHOE
	if err := unix.IoctlSetTermios(int(slave.Fd()), unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}
	restore() // again: nothing
	if got := lflag(t, slave); got != before&^unix.ECHOE {
		t.Errorf("a second restore changed the terminal: lflag %#x", got)
	}
}

// Off a terminal HushInput changes nothing and its restore is harmless.
func TestHushInputNotATerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "in")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	HushInput(f)()
}
