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
	// Summary is the plugin's one line of what it is for (its
	// PluginInfo.summary); "" when it did not answer.
	Summary string
}

// describeTimeout bounds each binary's describe for List.
const describeTimeout = 5 * time.Second

// List finds every plugin in dirs (Discover) and asks each it may run to
// describe itself, one after the other.
func List(dirs []string) []Listed {
	var out []Listed
	for _, c := range Discover("", dirs) {
		out = append(out, describe(c))
	}
	return out
}

// describe asks a candidate it may run to describe itself.
func describe(c Candidate) Listed {
	l := Listed{Candidate: c, Version: "?", Protocol: "?"}
	if c.Refused == "" {
		ctx, cancel := context.WithTimeout(context.Background(), describeTimeout)
		b, err := exec.CommandContext(ctx, c.Path, "describe").Output()
		cancel()
		if d, perr := ParseDescribe(b); err == nil && perr == nil {
			l.Version, l.Protocol = d.Info.Version, fmt.Sprintf("v1.%d", d.Info.ProtocolMinor)
			l.Summary = d.Info.Summary
		}
	}
	return l
}

// Summaries is each usable plugin of kind found on the search path, by
// name, with its one-line summary ("" for one that did not describe
// itself): what the guided setup's picker says of each workload.
func Summaries(kind string) map[string]string {
	out := map[string]string{}
	for _, c := range Discover(kind, SearchDirs()) {
		if c.Refused == "" {
			out[c.Name] = describe(c).Summary
		}
	}
	return out
}
