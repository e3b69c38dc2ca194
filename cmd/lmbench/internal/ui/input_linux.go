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
func HushInput(f *os.File) (restore func()) {
	fd := int(f.Fd())
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
