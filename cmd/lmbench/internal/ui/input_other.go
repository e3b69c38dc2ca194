//go:build !linux

package ui

import "os"

// HushInput would stop the terminal f from echoing what is typed while the
// live display is up; off Linux it leaves the terminal as it is.
func HushInput(f *os.File) (restore func()) { return func() {} }
