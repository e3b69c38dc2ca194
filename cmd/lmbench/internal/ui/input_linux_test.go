package ui

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

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

// A process in the background of its terminal is not stopped by
// HushInput (changing the terminal from there raises SIGTTOU). The test
// starts a session leader on a pseudo-terminal, which starts a process in
// a background process group that calls HushInput.
func TestHushInputInBackground(t *testing.T) {
	switch os.Getenv("LMBENCH_HUSH_HELPER") {
	case "leader":
		bg := exec.Command(os.Args[0], "-test.run=^TestHushInputInBackground$")
		bg.Env = append(os.Environ(), "LMBENCH_HUSH_HELPER=background")
		bg.Stdin, bg.Stdout, bg.Stderr = os.Stdin, os.Stdout, os.Stderr
		bg.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := bg.Start(); err != nil {
			fmt.Println("start:", err)
			return
		}
		done := make(chan error, 1)
		go func() { done <- bg.Wait() }()
		select {
		case err := <-done:
			fmt.Println("background exited:", err)
		case <-time.After(5 * time.Second):
			fmt.Println("background stopped")
			bg.Process.Kill()
		}
		return
	case "background":
		HushInput(os.Stdin)()
		return
	}
	master, slave := openPTY(t, 80, 24)
	before := lflag(t, slave)
	leader := exec.Command(os.Args[0], "-test.run=^TestHushInputInBackground$")
	leader.Env = append(os.Environ(), "LMBENCH_HUSH_HELPER=leader")
	var out strings.Builder
	leader.Stdin, leader.Stdout, leader.Stderr = slave, &out, &out
	leader.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	go io.Copy(io.Discard, master)
	if err := leader.Run(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "background exited: <nil>") {
		t.Errorf("the background process did not finish:\n%s", out.String())
	}
	if got := lflag(t, slave); got != before {
		t.Errorf("lflag %#x, want %#x unchanged", got, before)
	}
}
