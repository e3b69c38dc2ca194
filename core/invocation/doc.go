// Package invocation is lmbench run and lmbench sweep without the
// terminal: a Session resolves a run's arguments over the plugins they
// name (two passes: the first learns which plugins to start, their option
// schemas join the registry, the second parses everything strictly), the
// caller runs its guided setup when something required is missing, then
// Start builds the Spec (config.Build) and prepares it (bench.Prepare),
// and Execute runs it (bench.Run) and finishes: the shard leaves the
// barrier, the report and the upload are written, and the Ending says
// how the run ended, with its exit code. A sweep (Sweep) runs each point
// as a variant of one resolved run, in process, through the same Start
// and Execute.
//
// The caller keeps the terminal: parsing stays in core/config
// (RunFlagSet), the display, the form and the signals come in through
// Display and the Session's logger.
package invocation
