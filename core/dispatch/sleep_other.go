//go:build !linux

package dispatch

import "time"

// sleepPrecisely sleeps d (a Go timer: no finer sleep is wired up here).
func sleepPrecisely(d time.Duration) { time.Sleep(d) }
