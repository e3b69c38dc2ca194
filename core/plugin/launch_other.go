//go:build !linux

package plugin

import "os/exec"

// Elsewhere plugins notice the host is gone by themselves (the SDK's
// parent watchdog).
func onLaunchThread(f func()) { f() }

func withDeathSignal(*exec.Cmd) {}

// killGroup kills the plugin process (no process groups here).
func killGroup(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
