//go:build linux

package plugin

import (
	"os/exec"
	"runtime"
	"syscall"
)

// On Linux a plugin gets SIGKILL the moment the host dies, however it
// dies (kill -9 included): the parent-death signal. The kernel sends it
// when the thread that started the child exits, not the process, so
// plugins are started from a few goroutines locked to threads that live
// as long as the host.
const launchThreads = 4

var launches = make(chan func())

func init() {
	for range launchThreads {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for f := range launches {
				f()
			}
		}()
	}
}

// onLaunchThread runs f (which starts the plugin) on a launch thread.
func onLaunchThread(f func()) {
	done := make(chan struct{})
	launches <- func() {
		defer close(done)
		f()
	}
	<-done
}

// withDeathSignal makes the plugin die with the host, in a process group
// of its own, which killGroup kills: a wrapper script's children with it.
// (Outside the terminal's group, it does not get the terminal's Ctrl-C
// either: the host owns shutdown.)
func withDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// killGroup kills the plugin's process group (gone already: nothing).
func killGroup(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
