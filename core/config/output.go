package config

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// ResultsRoot is where runs go by default, each in a directory of its own
// (RunDir); Latest, inside it, links to the last one started.
const (
	ResultsRoot = "lmbench-results"
	Latest      = "latest"
)

// output reads the output options; without --output-dir a run gets a
// new directory under ResultsRoot, named for when it was set up and its
// workload, so no run ever lands on another's files. A shard keeps "."
// (each is given a directory of its own, which lmbench merge reads).
func (s *Spec) output(v *Values) error {
	s.Output = ReadOutput(v)
	if k := s.Output.RecordLogprobs; k < 0 || k > 20 {
		return fmt.Errorf("%s: must be between 0 (none) and 20 (OpenAI's top_logprobs limit), got %d", v.Origin(keyRecordLogprobs), k)
	}
	if s.Output.RecordLogprobs > 0 && !s.Output.RecordOutputs {
		return fmt.Errorf("%s %d: keeps the log-probabilities of recorded answers; add --record-outputs", v.Origin(keyRecordLogprobs), s.Output.RecordLogprobs)
	}
	if s.Output.Dir != "" {
		return nil
	}
	if s.Shard.Sharded() {
		s.Output.Dir = "."
		return nil
	}
	s.Output.Dir, s.Output.Auto = RunDir(s.workloadName(), time.Now()), true
	return nil
}

// RunDir is a run's default directory: ResultsRoot/<UTC time>-<workload>,
// the time to the second in a form every file system takes.
func RunDir(workload string, at time.Time) string {
	return filepath.Join(ResultsRoot, at.UTC().Format("2006-01-02T15-04-05Z")+"-"+pathSafe(workload))
}

// workloadName is the workload's name as far as the options tell: the
// name given, or the plugin binary's without lmbench-workload- and .exe.
func (s *Spec) workloadName() string {
	if s.Workload != "" || s.WorkloadPlugin == "" {
		return s.Workload
	}
	base := strings.TrimSuffix(filepath.Base(s.WorkloadPlugin), ".exe")
	return strings.TrimPrefix(base, "lmbench-workload-")
}

// pathSafe keeps letters, digits, '.', '_' and '-', and makes anything
// else a '-' ("run" when nothing is left).
func pathSafe(name string) string {
	out := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '-'
	}, name)
	if strings.Trim(out, ".-") == "" {
		return "run"
	}
	return out
}
