package ui

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// HushInput stops the terminal f from echoing what is typed while the live
// display is up: an echoed key (Enter, most of all) moves the cursor, and
// the next redraw then leaves a stale copy of the frame behind. Line
// editing and signals are untouched, so Ctrl-C still interrupts. The
// returned function puts the terminal back as it was; calling it again
// does nothing. When f is not a terminal nothing changes.
//
// A process in the background of its terminal leaves it alone: changing
// it would stop the process (SIGTTOU) until brought to the foreground.
func HushInput(f *os.File) (restore func()) {
	fd := int(f.Fd())
	if background(fd) {
		return func() {}
	}
	was, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return func() {}
	}
	hushed := *was
	hushed.Lflag &^= unix.ECHO
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &hushed); err != nil {
		return func() {}
	}
	var once sync.Once
	return func() { once.Do(func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, was) }) }
}

// background tells whether fd is this process's controlling terminal and
// another process group is in its foreground. (For a terminal that is not
// the controlling one, TIOCGPGRP fails, and changing it raises no signal.)
func background(fd int) bool {
	pg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil && pg != unix.Getpgrp()
}
