package sweep

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Defaults of --sweep-min-good and --sweep-search-steps.
const (
	DefaultMinGood     = 0.90
	DefaultSearchSteps = 3
)

// Flags are lmbench sweep's own flags; the rest of its arguments are
// each point's run's.
type Flags struct {
	Spec        string // --sweep KEY=VALUES as given
	Search      bool
	SearchSteps int
	MinGood     float64
	Continue    bool
	Help        bool
}

// SplitArgs takes lmbench sweep's flags out of args and returns the
// run's. Every error is a mistake on the command line.
func SplitArgs(args []string) (Flags, []string, error) {
	f := Flags{SearchSteps: DefaultSearchSteps, MinGood: DefaultMinGood}
	var rest []string
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(args[i], "=")
		value := func() (string, error) {
			if hasVal {
				return val, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("%s needs a value", name)
			}
			i++
			return args[i], nil
		}
		var err error
		switch name {
		case "--sweep":
			if f.Spec != "" {
				return f, nil, errors.New("--sweep is given twice: a sweep varies one option")
			}
			f.Spec, err = value()
		case "--sweep-search":
			f.Search = true
		case "--sweep-continue":
			f.Continue = true
		case "--sweep-search-steps":
			err = parseFlag(value, &f.SearchSteps, wholeSteps)
		case "--sweep-min-good":
			err = parseFlag(value, &f.MinGood, goodShare)
		case "-h", "--help":
			f.Help = true
		default:
			rest = append(rest, args[i])
		}
		if err != nil {
			return f, nil, err
		}
	}
	return f, rest, nil
}

// parseFlag reads a flag's value with parse into dst.
func parseFlag[T any](value func() (string, error), dst *T, parse func(string) (T, error)) error {
	s, err := value()
	if err != nil {
		return err
	}
	x, err := parse(s)
	if err != nil {
		return err
	}
	*dst = x
	return nil
}

func wholeSteps(s string) (int, error) {
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= 20 {
		return n, nil
	}
	return 0, fmt.Errorf("--sweep-search-steps: must be a whole number from 1 to 20, got %q", s)
}

func goodShare(s string) (float64, error) {
	if x, err := strconv.ParseFloat(s, 64); err == nil && x > 0 && x <= 1 {
		return x, nil
	}
	return 0, fmt.Errorf("--sweep-min-good: must be a share in (0, 1], got %q", s)
}
