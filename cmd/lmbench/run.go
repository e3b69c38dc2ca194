package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/ui"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/invocation"
	"github.com/lmbench/lmbench/core/progress"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// cmdRun is `lmbench run`: resolve the configuration (with the guided
// setup when something required is missing and a person is at the
// terminal), then have core start it (Spec, engine, model, tokens per GB,
// the workload's Configure) and export it or run it.
func cmdRun(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	s := newSession(stdin, stdout, stderr)
	defer s.Close()
	r, err := s.Resolve(args, nil)
	if err != nil {
		return invocation.ExitFailed, cliError(err)
	}
	if r.Flags.Help {
		if r.Workload == nil {
			return invocation.ExitOK, s.helpAll(stdout)
		}
		printRunHelp(stdout, r)
		return invocation.ExitOK, nil
	}
	if path := r.Flags.ExportConfig; path != "" {
		if err := config.CheckExportPath(path); err != nil { // before the engine is contacted or the form filled in
			return invocation.ExitFailed, err
		}
	}
	ctx, hurry, stop := s.interruptible()
	defer stop()
	r, cancelled, err := s.fillIn(ctx, args, r)
	if cancelled {
		fmt.Fprintln(stderr, "lmbench: setup cancelled; nothing was run")
		return invocation.ExitInterrupted, nil
	}
	if err != nil {
		return invocation.ExitFailed, cliError(err)
	}
	x, err := s.Start(ctx, r)
	if err != nil {
		return invocation.ExitFailed, cliError(err)
	}
	if path := r.Flags.ExportConfig; path != "" {
		return exportConfig(stdout, x, path)
	}
	return s.ended(x.Execute(ctx, s.display(hurry)))
}

// fillIn has the guided setup ask for the required arguments still
// missing, when it can; cancelled says the person cancelled the form.
func (s *session) fillIn(ctx context.Context, args []string, r *invocation.Resolved) (_ *invocation.Resolved, cancelled bool, err error) {
	labels, keys := r.Missing()
	if len(labels) == 0 {
		return r, false, nil
	}
	if why := s.noSetup(r); why != "" {
		return nil, false, config.UsageError{Err: fmt.Errorf("Missing required arguments: %s. Provide them or %s.", strings.Join(labels, ", "), why)}
	}
	if r, cancelled, err = s.guidedSetup(ctx, args, r, keys); cancelled || err != nil {
		return nil, cancelled, err
	}
	if labels, _ := r.Missing(); len(labels) > 0 {
		return nil, false, config.UsageError{Err: fmt.Errorf("Missing required arguments: %s.", strings.Join(labels, ", "))}
	}
	return r, false, nil
}

// noSetup says why the guided setup cannot run ("" when it can): it needs
// a terminal on stdin and stdout, and is off with --no-interactive or
// --export-config (which are for scripts).
func (s *session) noSetup(r *invocation.Resolved) string {
	switch {
	case r.Flags.ExportConfig != "":
		return "remove --export-config for guided setup"
	case r.Flags.NoInteractive:
		return "remove --no-interactive for guided setup"
	case !interactive(s):
		return "run lmbench in a terminal for guided setup (stdin or stdout is not a terminal)"
	}
	return ""
}

// exportConfig writes --export-config and says how to replay it.
func exportConfig(stdout io.Writer, x *invocation.Run, path string) (int, error) {
	replay, err := x.ExportConfig(path)
	if err != nil {
		return invocation.ExitFailed, err
	}
	fmt.Fprintf(stdout, "Configuration exported to %s\n", path)
	on, off := "", ""
	if isTerminal(stdout) {
		on, off = "\033[1;96m", "\033[0m" // bold cyan, as the original
	}
	fmt.Fprintf(stdout, "%sReplay with: %s%s\n", on, replay, off)
	return invocation.ExitOK, nil
}

// display is the terminal a run shows itself on: the banner, the
// progress display the streams call for (live on a terminal, a plain
// line every few seconds otherwise, none with --quiet), --report.
func (s *session) display(hurry <-chan struct{}) invocation.Display {
	return invocation.Display{
		Stdout: s.stdout, Hurry: hurry,
		Banner: func(c protocol.Configured) { ui.Banner(s.stdout, c, isTerminal(s.stdout)) },
		Progress: func(ctx context.Context, quiet bool) (progress.Sink, time.Duration) {
			// The input echo it turns off comes back when the session
			// closes, also when the run fails before the display opens.
			sink, every, restore := ui.Progress(ctx, s.stdin, s.stdout, s.stderr, s.logOut, quiet)
			s.OnClose(restore)
			return sink, every
		},
		Report: func(dir string) error { return runReport(dir, s.stdout) },
	}
}

// ended tells how the run ended and returns its exit code.
func (s *session) ended(end invocation.Ending) (int, error) {
	for _, n := range end.Notes {
		fmt.Fprintf(s.stderr, "lmbench: %s\n", n)
	}
	return end.Code, end.Err
}
