package ui

import (
	"context"
	"errors"
	"io"
)

// Kind is how a field's value is entered and parsed.
type Kind int

// Field kinds.
const (
	KindString Kind = iota
	KindInt
	KindFloat
	KindBool
	KindEnum
)

// Field is one setting the guided setup can show or ask for.
type Field struct {
	Key      string   // config key, e.g. "engine_url", "ldqa_document_length"
	Flag     string   // "--engine-url"
	Label    string   // short human label
	Help     string   // one or two sentences shown under the label
	Kind     Kind     // how the value is entered
	Enum     []string // KindEnum choices
	Value    string   // current value as text (default, file, env or flag)
	Required bool     // must be non-empty when the form completes
	Group    string   // "General", "Workload: long-doc-qa", …
	Advanced bool     // hidden behind an "advanced settings?" confirm
	Secret   bool     // never echoed
	// Validate parses the value and checks its bounds; its message names
	// what is expected. nil = none.
	Validate func(string) error
}

// Setup is everything the form needs. WorkloadFields is called after the
// user picks a workload (the host launches the plugin and converts its
// option schema), so third-party workloads get a form for free.
type Setup struct {
	Missing        []string // keys that are required and still empty (asked first)
	General        []Field
	Workloads      []string // discovered workload names, for the choice
	Workload       string   // already chosen ("" = ask)
	WorkloadFields func(workload string) ([]Field, error)
	ExportPath     string // default file name offered for "export config"
}

// Action is what the person chose at the end of the form.
type Action int

// Actions.
const (
	ActionStart Action = iota
	ActionExport
	ActionCancel
)

// Outcome is the result of the guided setup.
type Outcome struct {
	Action   Action
	Workload string
	// Values maps key → text for every field shown; the host re-validates
	// them through its normal config path.
	Values     map[string]string
	ExportPath string // when Action == ActionExport
}

// RunSetup runs the guided form on in/out (a terminal in production; tests
// drive it headlessly). It shows the summary at the end and offers start /
// export config / cancel. ctx cancellation or Ctrl-C returns ActionCancel.
func RunSetup(ctx context.Context, in io.Reader, out io.Writer, s Setup) (Outcome, error) {
	return Outcome{Action: ActionCancel}, errors.New("guided setup: not available in this build")
}
