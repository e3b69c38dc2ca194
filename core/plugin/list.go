package plugin

import (
	"context"
	"fmt"
	"os/exec"
	"time"
)

// Listed is a plugin found, as lmbench plugins lists it.
type Listed struct {
	Candidate
	// Version and Protocol (v1.MINOR) are what the binary's describe
	// said; "?" when it was refused, did not answer or answered nonsense.
	Version, Protocol string
}

// describeTimeout bounds each binary's describe for List.
const describeTimeout = 5 * time.Second

// List finds every plugin in dirs (Discover) and asks each it may run to
// describe itself, one after the other.
func List(dirs []string) []Listed {
	var out []Listed
	for _, c := range Discover("", dirs) {
		l := Listed{Candidate: c, Version: "?", Protocol: "?"}
		if c.Refused == "" {
			ctx, cancel := context.WithTimeout(context.Background(), describeTimeout)
			b, err := exec.CommandContext(ctx, c.Path, "describe").Output()
			cancel()
			if d, perr := ParseDescribe(b); err == nil && perr == nil {
				l.Version, l.Protocol = d.Info.Version, fmt.Sprintf("v1.%d", d.Info.ProtocolMinor)
			}
		}
		out = append(out, l)
	}
	return out
}
