// Package outdir is a run's output directory: Check refuses one that
// holds a run before anything is contacted (unless --overwrite) and picks
// a free name for a directory of lmbench's choosing; Make gets it ready
// before the journal is created (a new directory linked from Latest, or
// the old run's files removed); Files names what a run wrote in it.
package outdir
