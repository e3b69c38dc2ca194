//go:build !unix

package overhead

import "time"

// processCPU: this platform's CPU time is not read (the certificate's CPU
// figures are not defined).
func processCPU() (time.Duration, bool) { return 0, false }
