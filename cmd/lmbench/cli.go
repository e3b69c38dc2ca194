package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/ui"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/invocation"
)

// usageError is a command-line mistake (exit 2).
type usageError struct{ error }

// cli is one invocation: its streams and the command it runs.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	cmd            *command
}

// exit prints err and says the exit code: 2 and the command list after a
// usage error, 0 once --help was printed, 1 for another error unless the
// command said otherwise (run and sweep say which code their errors have).
func (c *cli) exit(code int, err error) int {
	switch {
	case err == nil:
		return code
	case errors.Is(err, errHelped):
		return invocation.ExitOK
	}
	fmt.Fprintf(c.stderr, "lmbench: %v\n", err)
	var ue usageError
	var be config.UsageError // a plugin named wrongly, for commands that leave the code to exit
	if errors.As(err, &ue) || code == invocation.ExitOK && errors.As(err, &be) {
		if c.cmd == nil || !c.cmd.ownHint {
			printUsage(c.stderr)
		}
		return invocation.ExitUsage
	}
	if code == invocation.ExitOK {
		return invocation.ExitFailed
	}
	return code
}

// errHelped ends a command that printed its --help (exit 0).
var errHelped = errors.New("help printed")

// parse parses args with the command's flags (register's). With --help
// it prints the command's help and returns errHelped, unless lax: then
// flags it does not know pass (plugins' flags, parsed strictly once the
// plugins are known) and the caller prints the help when it has them all.
func (c *cli) parse(args []string, register func(*pflag.FlagSet), lax bool) (*pflag.FlagSet, error) {
	fs := ui.FlagSet(c.cmd.Name, register)
	fs.ParseErrorsAllowlist.UnknownFlags = lax
	if err := fs.Parse(args); err != nil {
		return nil, usageError{err}
	}
	if !lax && ui.Helped(fs) {
		return nil, c.printHelp(fs)
	}
	return fs, nil
}

// printHelp prints the command's help and fs's flags; it returns errHelped.
func (c *cli) printHelp(fs *pflag.FlagSet) error {
	c.cmd.PrintHelp(c.stdout, fs)
	return errHelped
}

// parseFlagsOnly parses args as parse does and refuses any that is not
// a flag.
func (c *cli) parseFlagsOnly(args []string, register func(*pflag.FlagSet)) error {
	fs, err := c.parse(args, register, false)
	if err != nil {
		return err
	}
	return noArgs(fs)
}

// noArgs is a usage error for fs's first argument, if any.
func noArgs(fs *pflag.FlagSet) error {
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q (flags start with --)", fs.Arg(0))}
	}
	return nil
}

// streams adapts a command that takes the streams themselves (run, sweep).
func streams(f func([]string, io.Reader, io.Writer, io.Writer) (int, error)) func(*cli, []string) (int, error) {
	return func(c *cli, args []string) (int, error) { return f(args, c.stdin, c.stdout, c.stderr) }
}

// errOnly adapts a command whose only outcome is its error.
func errOnly(f func(*cli, []string) error) func(*cli, []string) (int, error) {
	return func(c *cli, args []string) (int, error) { return invocation.ExitOK, f(c, args) }
}

// untilSignal is a context that Ctrl-C or SIGTERM ends.
func untilSignal() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
