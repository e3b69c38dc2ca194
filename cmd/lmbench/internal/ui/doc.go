// Package ui holds lmbench's terminal user interface: the guided setup
// form ([RunSetup]), shown when required arguments are missing and stdin
// and stdout are a terminal, and the live progress display ([Live]), a
// [bench.ProgressSink] that redraws in place while a run is going.
//
// Both take their input and output as parameters, so tests drive them
// headlessly with scripted key presses and a buffer.
package ui
