package ui

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/config"
)

// RunCompleter completes lmbench run's words: flag names (the named
// workload's included), workload and exporter names, enum values; nothing
// (so the shell offers file names) for paths.
type RunCompleter struct {
	// Flags are lmbench run's flags and registry with the options of the
	// workload named ("": none) added.
	Flags func(workload string) (*pflag.FlagSet, *config.Registry)
	// Plugins lists the plugins of a kind.
	Plugins func(kind string) []string
}

// Complete completes cur, the last of words (the words after "run"),
// after prev.
func (r RunCompleter) Complete(words []string, prev, cur string) []string {
	workload := ""
	for i, w := range words[:len(words)-1] {
		if v, ok := strings.CutPrefix(w, "--workload="); ok {
			workload = v
		} else if w == "--workload" && i+1 < len(words)-1 {
			workload = words[i+1]
		}
	}
	fs, reg := r.Flags(workload)
	if strings.HasPrefix(prev, "--") && !strings.HasPrefix(cur, "-") {
		switch name := strings.TrimPrefix(prev, "--"); name {
		case "workload", "exporter":
			return WithPrefix(r.Plugins(name), cur)
		default:
			if o, ok := reg.LookupFlag(name); ok && len(o.Enum) > 0 {
				return WithPrefix(o.Enum, cur)
			}
			if f := fs.Lookup(name); f != nil && f.NoOptDefVal == "" {
				return nil // a value: file names
			}
		}
	}
	if strings.HasPrefix(cur, "-") {
		return FlagNames(fs, cur)
	}
	return nil
}
