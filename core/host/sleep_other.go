//go:build !linux

package host

import "time"

// sleepPrecisely sleeps d (a Go timer: no finer sleep is wired up here).
func sleepPrecisely(d time.Duration) { time.Sleep(d) }
