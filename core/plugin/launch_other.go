//go:build !linux

package plugin

import "os/exec"

// Elsewhere plugins notice the host is gone by themselves (the SDK's
// parent watchdog).
func onLaunchThread(f func()) { f() }

func withDeathSignal(*exec.Cmd) {}
