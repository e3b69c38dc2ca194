package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// Message explains why a file key or variable was ignored:
// `ignoring config key "mrc_qps": it is an option of workload
// multi-round-chat, not of long-doc-qa` (workload: the run's, "" for
// none yet).
func (ig Ignored) Message(workload string) string {
	what := fmt.Sprintf("config key %q", ig.Name)
	if ig.Env {
		what = "variable " + ig.Name
	}
	why := fmt.Sprintf("it is an option of %s %s", ig.Owner.Kind, ig.Owner.Plugin)
	switch {
	case ig.Owner.Kind == "workload" && workload != "":
		why += ", not of " + workload
	case ig.Owner.Kind == "exporter":
		why += fmt.Sprintf(", which this run does not use (add --exporter %s to use it)", ig.Owner.Plugin)
	}
	return "ignoring " + what + ": " + why
}

// UnknownEnvError is the error for v's LMBENCH_* variables that set no
// option of fs's (nil when there are none), each with a suggestion.
func (v *Values) UnknownEnvError(fs *pflag.FlagSet) error {
	if len(v.UnknownEnv) == 0 {
		return nil
	}
	var envs, errs []string
	fs.VisitAll(func(f *pflag.Flag) {
		if o, ok := v.reg.LookupFlag(f.Name); ok {
			envs = append(envs, o.Env)
		}
	})
	for _, name := range v.UnknownEnv {
		msg := name + ": no option has this variable"
		if c := Closest(name, envs); c != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", c)
		}
		errs = append(errs, msg+"; see lmbench run --help for the options and their variables")
	}
	return errors.New(strings.Join(errs, "\n"))
}

// FlagError adds a hint to a flag parse error of fs: the closest flag's
// name, or where a workload's flags start (workload, prefix: the run's
// workload and its flag prefix, "" for none).
func FlagError(err error, fs *pflag.FlagSet, workload, prefix string) error {
	hint := ""
	if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
		var names []string
		fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		if c := Closest(name, names); c != "" {
			hint = fmt.Sprintf(" (did you mean --%s?)", c)
		}
	}
	if hint == "" && workload != "" && strings.Contains(err.Error(), "unknown flag") {
		hint = fmt.Sprintf(" (the flags of workload %s start with --%s-; see lmbench run --workload %s --help)",
			workload, prefix, workload)
	}
	return fmt.Errorf("%v%s", err, hint)
}
