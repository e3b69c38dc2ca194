package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/huh"
	"github.com/charmbracelet/lipgloss"
	"golang.org/x/term"
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
	// what is expected. nil = none. It is not called for an empty value of
	// a field that is not required (empty means "not set").
	Validate func(string) error
}

// Setup is everything the form needs. WorkloadFields is called after the
// user picks a workload (the host launches the plugin and converts its
// option schema), so third-party workloads get a form for free.
//
// Missing is asked first, in order, one question per page. A key of
// Missing is looked up in General for its label, help and validation.
// KeyWorkload asks for the workload among Workloads (it is also asked when
// Workload is empty). When both KeyLMCacheURL and KeyTokensPerGB are
// missing, the form asks whether an LMCache server is running and then
// for its URL or for the tokens per GB, as the original does.
type Setup struct {
	Missing   []string // keys that are required and still empty (asked first)
	General   []Field
	Workloads []string // discovered workload names, for the choice
	// WorkloadSummaries says in one line what each workload is for (its
	// plugin's summary), shown beside its name in the choice; may be nil.
	WorkloadSummaries map[string]string
	Workload          string // already chosen ("" = ask)
	WorkloadFields    func(workload string) ([]Field, error)
	ExportPath        string // default file name offered for "export config"
	// CheckExportPath, when set, checks the export file name as typed
	// (its extension picks the format); the message says what is expected.
	CheckExportPath func(path string) error
	// EngineServesStatus, when set, tells whether an engine URL (as
	// answered) serves LMCache's /status itself, as the built-in engine
	// does: then neither the LMCache URL nor tokens per GB is asked.
	EngineServesStatus func(engineURL string) bool
}

// Keys the form treats specially (spec §6.1 names).
const (
	KeyEngineURL   = "engine_url"
	KeyWorkload    = "workload"
	KeyLMCacheURL  = "lmcache_url"
	KeyTokensPerGB = "tokens_per_gb_kvcache"
	KeyModel       = "model" // empty is summarised as "(auto-detect)"
)

// DefaultExportPath is offered for "export config" when Setup.ExportPath
// is empty (the original's default).
const DefaultExportPath = "bench_config.json"

// Action is what the person chose at the end of the form.
type Action int

// Actions.
const (
	ActionStart Action = iota
	ActionExport
	ActionCancel
)

func (a Action) String() string {
	switch a {
	case ActionStart:
		return "start"
	case ActionExport:
		return "export"
	case ActionCancel:
		return "cancel"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Outcome is the result of the guided setup.
type Outcome struct {
	Action   Action
	Workload string
	// Values maps key → text, for every field shown (general and workload
	// settings, whether edited or not, and the answers to the missing
	// ones); the host re-validates them through its normal config path.
	// Values are trimmed; a bool is "true" or "false".
	Values     map[string]string
	ExportPath string // when Action == ActionExport
}

// RunSetup runs the guided form on in/out (a terminal in production; tests
// drive it headlessly). It shows the summary at the end and offers start /
// export config / cancel. ctx cancellation or Ctrl-C returns ActionCancel.
// The error is for a failure of the terminal or of WorkloadFields.
func RunSetup(ctx context.Context, in io.Reader, out io.Writer, s Setup) (Outcome, error) {
	m := newSetupModel(s, out)
	if m.err != nil {
		return Outcome{Action: ActionCancel}, m.err
	}
	opts := []tea.ProgramOption{tea.WithInput(in), tea.WithOutput(out), tea.WithContext(ctx)}
	final, err := tea.NewProgram(m, opts...).Run()
	if fm, ok := final.(*setupModel); ok {
		m = fm
	}
	switch {
	case errors.Is(err, tea.ErrProgramKilled), errors.Is(err, tea.ErrInterrupted):
		return Outcome{Action: ActionCancel}, nil
	case err != nil:
		return Outcome{Action: ActionCancel}, fmt.Errorf("guided setup: %w", err)
	case m.err != nil:
		return Outcome{Action: ActionCancel}, m.err
	}
	return m.outcome(), nil
}

// entry is the value of one field while the form runs (huh edits it
// through pointers).
type entry struct {
	f Field
	s string
	b bool
}

func (e *entry) text() string {
	if e.f.Kind == KindBool {
		return strconv.FormatBool(e.b)
	}
	return strings.TrimSpace(e.s)
}

// step is where the setup is.
type step int

const (
	stepRequired step = iota // missing values, workload choice, general settings
	stepLoading              // asking the workload for its options
	stepWorkload             // workload settings
	stepFinal                // summary and action
	stepDone
)

type (
	formDoneMsg    struct{}
	formAbortMsg   struct{}
	workloadLoaded struct {
		fields []Field
		err    error
	}
)

// setupModel runs the forms of the setup one after the other inside one
// Bubble Tea program, so a single reader serves the whole setup.
type setupModel struct {
	s     Setup
	width int // fixed form width when out is not a terminal; 0 = follow the terminal
	// height and termWidth are the terminal's, from its last WindowSizeMsg (0: not
	// known): a form made later (the confirm screen) is sized to it too.
	height, termWidth int
	st                setupStyles
	step              step
	form              *huh.Form
	entries           map[string]*entry
	shown             []string // keys shown, in order
	asked             []string // keys asked as missing

	workload   string
	hasLMCache bool
	wlFields   []Field

	configureGeneral, advancedGeneral   bool
	configureWorkload, advancedWorkload bool

	action     Action
	exportPath string
	err        error
}

type setupStyles struct {
	title, rule, label, value, dim, ok lipgloss.Style
}

func newSetupModel(s Setup, out io.Writer) *setupModel {
	r := lipgloss.NewRenderer(out)
	m := &setupModel{
		s: s, entries: map[string]*entry{}, workload: s.Workload, hasLMCache: true,
		action: ActionStart, exportPath: s.ExportPath,
		st: setupStyles{
			title: r.NewStyle().Bold(true),
			rule:  r.NewStyle().Faint(true),
			label: r.NewStyle().Faint(true),
			value: r.NewStyle().Foreground(lipgloss.Color("6")),
			dim:   r.NewStyle().Faint(true),
			ok:    r.NewStyle().Bold(true).Foreground(lipgloss.Color("2")),
		},
	}
	if m.exportPath == "" {
		m.exportPath = DefaultExportPath
	}
	if f, ok := out.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		m.width = fallbackWidth
	} else if w, _, err := term.GetSize(int(f.Fd())); err == nil {
		m.termWidth = w // the first page's choices are laid out before any resize
	}
	if s.Workload == "" && len(s.Workloads) == 0 {
		m.err = errors.New("guided setup: no workload plugins were found to choose from")
		return m
	}
	if s.Workload != "" && s.WorkloadFields != nil {
		// The workload is known: its settings come from the same form
		// sequence, loaded before the first question.
		m.wlFields, m.err = s.WorkloadFields(s.Workload)
		if m.err != nil {
			m.err = fmt.Errorf("workload %s: options: %w", s.Workload, m.err)
			return m
		}
	}
	m.form = m.requiredForm()
	return m
}

func (m *setupModel) Init() tea.Cmd { return m.form.Init() }

func (m *setupModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case formAbortMsg:
		m.action, m.step = ActionCancel, stepDone
		return m, tea.Quit
	case formDoneMsg:
		return m, m.next()
	case tea.KeyMsg:
		if m.step == stepLoading && msg.Type == tea.KeyCtrlC {
			// No form is up to take Ctrl-C while the workload loads.
			m.action, m.step = ActionCancel, stepDone
			return m, tea.Quit
		}
	case workloadLoaded:
		if m.step != stepLoading {
			return m, nil // cancelled meanwhile
		}
		if msg.err != nil {
			m.err = fmt.Errorf("workload %s: options: %w", m.workload, msg.err)
			m.action, m.step = ActionCancel, stepDone
			return m, tea.Quit
		}
		m.wlFields = msg.fields
		return m, m.startWorkloadStep()
	}
	if m.form == nil || m.step == stepLoading || m.step == stepDone {
		return m, nil
	}
	if ws, ok := msg.(tea.WindowSizeMsg); ok {
		m.height, m.termWidth = ws.Height, ws.Width
		// The form gets the room left under the header (and the blank line
		// huh puts before its help), so a tall page scrolls inside the form
		// instead of pushing the header and the question off the screen.
		ws.Height = formHeight(ws.Height)
		msg = ws
	}
	f, cmd := m.form.Update(msg)
	if hf, ok := f.(*huh.Form); ok {
		m.form = hf
	}
	return m, cmd
}

// next moves on once the current form is complete.
func (m *setupModel) next() tea.Cmd {
	switch m.step {
	case stepRequired:
		if m.s.Workload == "" {
			m.step = stepLoading
			wl, load := m.workload, m.s.WorkloadFields
			if load == nil {
				return func() tea.Msg { return workloadLoaded{} }
			}
			return func() tea.Msg {
				fields, err := load(wl)
				return workloadLoaded{fields: fields, err: err}
			}
		}
		return m.startWorkloadStep()
	case stepWorkload:
		return m.startFinalStep()
	case stepFinal:
		m.step = stepDone
		return tea.Quit
	}
	return nil
}

func (m *setupModel) startWorkloadStep() tea.Cmd {
	m.step = stepWorkload
	m.form = m.workloadForm()
	if m.form == nil {
		return m.startFinalStep()
	}
	return m.form.Init()
}

func (m *setupModel) startFinalStep() tea.Cmd {
	m.step = stepFinal
	m.form = m.finalForm()
	return m.form.Init()
}

// headerLines is the height of the header above the form.
const headerLines = 3

// formHeight is the room a form has on a terminal of height rows: what
// the header leaves, less the blank line huh puts before its help.
func formHeight(rows int) int { return max(rows-headerLines-2, 5) }

// confirmLines is what the confirm page takes besides the summary's
// rows: the note's title and margins, the question, its three choices,
// the spacing between them and the help line.
const confirmLines = 12

func (m *setupModel) View() string {
	var b strings.Builder
	rule := m.st.rule.Render(strings.Repeat("═", 60))
	b.WriteString(rule + "\n")
	b.WriteString(m.st.title.Render(" lmbench — guided setup") + "\n")
	b.WriteString(rule + "\n")
	switch m.step {
	case stepLoading:
		b.WriteString(m.st.dim.Render(fmt.Sprintf("Loading the options of workload %s…", m.workload)) + "\n")
	case stepDone:
		if m.err != nil {
			return ""
		}
		switch m.action {
		case ActionCancel:
			b.WriteString("Setup cancelled.\n")
		case ActionStart:
			b.WriteString(m.summary())
			b.WriteString(m.st.ok.Render("Starting the benchmark.") + "\n")
		case ActionExport:
			b.WriteString(m.summary())
			b.WriteString(m.st.ok.Render("Exporting the configuration to "+strings.TrimSpace(m.exportPath)+".") + "\n")
		}
	default:
		if m.form != nil {
			b.WriteString(m.form.View())
		}
	}
	return b.String()
}

// newForm wraps groups in a form that reports back to the model instead of
// quitting the program.
func (m *setupModel) newForm(groups ...*huh.Group) *huh.Form {
	f := huh.NewForm(groups...).WithShowHelp(true)
	if m.width > 0 {
		f = f.WithWidth(m.width)
	}
	if m.height > 0 {
		f = f.WithHeight(formHeight(m.height))
	}
	f.SubmitCmd = func() tea.Msg { return formDoneMsg{} }
	f.CancelCmd = func() tea.Msg { return formAbortMsg{} }
	return f
}

// requiredForm asks for the missing values and the workload, then offers
// the general settings.
func (m *setupModel) requiredForm() *huh.Form {
	general := map[string]Field{}
	for _, f := range m.s.General {
		general[f.Key] = f
	}
	missing := slices.Clone(m.s.Missing)
	if m.s.Workload == "" && !slices.Contains(missing, KeyWorkload) {
		missing = append(missing, KeyWorkload)
	}
	either := slices.Contains(missing, KeyLMCacheURL) && slices.Contains(missing, KeyTokensPerGB)

	var groups []*huh.Group
	for _, key := range missing {
		switch {
		case key == KeyWorkload:
			if m.s.Workload != "" {
				continue
			}
			if m.workload == "" || !slices.Contains(m.s.Workloads, m.workload) {
				m.workload = m.s.Workloads[0]
			}
			groups = append(groups, huh.NewGroup(huh.NewSelect[string]().
				Title("Workload").
				Description("The request pattern to benchmark with.").
				Options(m.workloadOptions()...).
				Value(&m.workload)))
		case either && key == KeyTokensPerGB:
			continue // asked together with the LMCache URL
		case either && key == KeyLMCacheURL:
			url := m.missingEntry(KeyLMCacheURL, general)
			tok := m.missingEntry(KeyTokensPerGB, general)
			groups = append(groups,
				huh.NewGroup(huh.NewConfirm().
					Title("LMCache server").
					Description("Is an LMCache server running next to the engine? Its /status tells the tokens per GB of KV cache.").
					Affirmative("Yes").Negative("No").
					Value(&m.hasLMCache)).WithHideFunc(m.engineServesStatus),
				huh.NewGroup(m.input(url)).WithHideFunc(func() bool { return !m.hasLMCache || m.engineServesStatus() }),
				huh.NewGroup(m.input(tok)).WithHideFunc(func() bool { return m.hasLMCache || m.engineServesStatus() }),
			)
		default:
			e := m.missingEntry(key, general)
			groups = append(groups, huh.NewGroup(m.input(e)))
		}
	}

	var rest []Field
	for _, f := range m.s.General {
		if !slices.Contains(m.asked, f.Key) {
			rest = append(rest, f)
		}
	}
	groups = append(groups, m.settingsGroups("General settings",
		"Would you like to configure general settings (model, KV cache volume, …)? Defaults will be used if you skip.",
		"general", rest, &m.configureGeneral, &m.advancedGeneral)...)
	if len(groups) == 0 {
		// Nothing to ask before the workload settings: a form needs a
		// page, so say where the setup stands.
		groups = append(groups, huh.NewGroup(huh.NewNote().
			Title("Guided setup").
			Description(escapeNote(fmt.Sprintf("Workload: %s", m.workload))).
			Next(true).NextLabel("Continue")))
	}
	return m.newForm(groups...)
}

// workloadOptions are the workload choices: each name with what it is
// for, from its summary, on one line.
func (m *setupModel) workloadOptions() []huh.Option[string] {
	width := 0
	for _, w := range m.s.Workloads {
		width = max(width, utf8.RuneCountInString(w))
	}
	opts := make([]huh.Option[string], len(m.s.Workloads))
	for i, w := range m.s.Workloads {
		label := w
		if sum := m.s.WorkloadSummaries[w]; sum != "" {
			// Clipped to the form's width: a wrapped choice reads as two.
			label = fmt.Sprintf("%-*s  %s", width, w, oneLine(sum, max(m.noteWidth()-width-4, 20)))
		}
		opts[i] = huh.NewOption(label, w)
	}
	return opts
}

// missingEntry registers a field asked because it is missing.
func (m *setupModel) missingEntry(key string, general map[string]Field) *entry {
	f, ok := general[key]
	if !ok {
		f = Field{Key: key, Label: key, Flag: "--" + strings.ReplaceAll(key, "_", "-")}
	}
	// For the LMCache URL / tokens per GB pair only the page of the one
	// needed is shown, and only a shown page is validated.
	f.Required = true
	m.asked = append(m.asked, key)
	return m.register(f)
}

func (m *setupModel) register(f Field) *entry {
	e := &entry{f: f, s: f.Value}
	if f.Kind == KindBool {
		e.b, _ = strconv.ParseBool(strings.TrimSpace(f.Value))
	}
	if _, dup := m.entries[f.Key]; !dup {
		m.shown = append(m.shown, f.Key)
	}
	m.entries[f.Key] = e
	return e
}

// settingsGroups is a skip-or-configure gate followed by the fields'
// groups (in order of first appearance) and, when there are advanced
// fields, a second gate and their groups.
func (m *setupModel) settingsGroups(title, question, what string, fields []Field, configure, advanced *bool) []*huh.Group {
	if len(fields) == 0 {
		return nil
	}
	groups := []*huh.Group{huh.NewGroup(huh.NewSelect[bool]().
		Title(title).Description(question).
		Options(huh.NewOption("Skip, use defaults", false), huh.NewOption("Yes, configure", true)).
		Value(configure))}
	var basic, adv []Field
	for _, f := range fields {
		if f.Advanced {
			adv = append(adv, f)
		} else {
			basic = append(basic, f)
		}
	}
	for _, g := range m.byGroup(basic, title) {
		groups = append(groups, g.WithHideFunc(func() bool { return !*configure }))
	}
	if len(adv) > 0 {
		groups = append(groups, huh.NewGroup(huh.NewConfirm().
			Title("Advanced "+what+" settings").
			Description(fmt.Sprintf("Show the %d advanced %s settings?", len(adv), what)).
			Affirmative("Yes").Negative("No").
			Value(advanced)).WithHideFunc(func() bool { return !*configure }))
		for _, g := range m.byGroup(adv, title+" (advanced)") {
			groups = append(groups, g.WithHideFunc(func() bool { return !*configure || !*advanced }))
		}
	}
	return groups
}

// byGroup registers fields and returns one huh group per Field.Group, in
// order of first appearance, titled with the group's name.
func (m *setupModel) byGroup(fields []Field, fallback string) []*huh.Group {
	var (
		names []string
		byKey = map[string][]huh.Field{}
	)
	for _, f := range fields {
		name := f.Group
		if name == "" {
			name = fallback
		}
		if _, ok := byKey[name]; !ok {
			names = append(names, name)
		}
		byKey[name] = append(byKey[name], m.input(m.register(f)))
	}
	var groups []*huh.Group
	for _, n := range names {
		title := n
		if strings.HasSuffix(fallback, " (advanced)") && !strings.HasSuffix(n, " (advanced)") {
			title = n + " (advanced)"
		}
		groups = append(groups, huh.NewGroup(byKey[n]...).Title(title))
	}
	return groups
}

// input is the huh field for an entry, by kind.
func (m *setupModel) input(e *entry) huh.Field {
	f := e.f
	title := f.Label
	if title == "" {
		title = f.Key
	}
	desc := f.Help
	if f.Flag != "" {
		desc = strings.TrimSpace(desc + " (" + f.Flag + ")")
	}
	switch f.Kind {
	case KindBool:
		return huh.NewConfirm().Key(f.Key).Title(title).Description(desc).Affirmative("Yes").Negative("No").Value(&e.b)
	case KindEnum:
		opts := huh.NewOptions(f.Enum...)
		if strings.TrimSpace(e.s) == "" && !f.Required {
			opts = append([]huh.Option[string]{huh.NewOption("(not set)", "")}, opts...)
		}
		return huh.NewSelect[string]().Key(f.Key).Title(title).Description(desc).Options(opts...).Value(&e.s)
	}
	in := huh.NewInput().Key(f.Key).Title(title).Description(desc).Value(&e.s).Validate(validator(f))
	if f.Secret {
		in = in.EchoMode(huh.EchoModePassword)
	}
	return in
}

// validator checks a typed value: required, then the field's own
// validation, or a number parse for numeric kinds without one.
func validator(f Field) func(string) error {
	return func(v string) error {
		v = strings.TrimSpace(v)
		if v == "" {
			if f.Required {
				return fmt.Errorf("%s is required", nameOf(f))
			}
			return nil
		}
		if f.Validate != nil {
			return f.Validate(v)
		}
		switch f.Kind {
		case KindInt:
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				return fmt.Errorf("%s: expected an integer, got %q", nameOf(f), v)
			}
		case KindFloat:
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				return fmt.Errorf("%s: expected a number, got %q", nameOf(f), v)
			}
		}
		return nil
	}
}

func nameOf(f Field) string {
	if f.Flag != "" {
		return f.Flag
	}
	return f.Key
}

// workloadForm offers the workload's settings; nil when it has none.
func (m *setupModel) workloadForm() *huh.Form {
	groups := m.settingsGroups(fmt.Sprintf("Workload settings (%s)", m.workload),
		fmt.Sprintf("Would you like to configure the %s workload? Defaults will be used if you skip.", m.workload),
		"workload", m.wlFields, &m.configureWorkload, &m.advancedWorkload)
	if len(groups) == 0 {
		return nil
	}
	return m.newForm(groups...)
}

// finalForm shows the summary and asks what to do, and where to export.
func (m *setupModel) finalForm() *huh.Form {
	action := huh.NewGroup(
		huh.NewNote().Title("Configuration summary").Description(escapeNote(ansiFree(m.summaryText(m.summaryBudget())))),
		huh.NewSelect[Action]().Title("What would you like to do?").
			Options(
				huh.NewOption("Start the benchmark", ActionStart),
				huh.NewOption("Export the configuration for later use and exit", ActionExport),
				huh.NewOption("Cancel", ActionCancel),
			).Value(&m.action),
	)
	path := huh.NewGroup(huh.NewInput().Title("Export file").
		Description("The resolved configuration is written there; replay it with --config FILE.").
		Value(&m.exportPath).
		Validate(func(v string) error {
			if strings.TrimSpace(v) == "" {
				return errors.New("the export file name is required")
			}
			if m.s.CheckExportPath != nil {
				return m.s.CheckExportPath(strings.TrimSpace(v))
			}
			return nil
		})).WithHideFunc(func() bool { return m.action != ActionExport })
	return m.newForm(action, path)
}

// summaryRows lists the workload and every shown field as label and
// value, secrets masked.
func (m *setupModel) summaryRows() [][2]string {
	rows := [][2]string{{"Workload", m.workload}}
	for _, k := range m.shown {
		e := m.entries[k]
		if !m.isShown(k) {
			continue
		}
		v := e.text()
		switch {
		case e.f.Secret && v != "":
			v = "••••••"
		case v == "" && k == KeyLMCacheURL:
			continue // tokens per GB was given instead
		case v == "" && k == KeyModel:
			v = "(auto-detect)"
		case v == "":
			v = "(not set)"
		}
		label := e.f.Label
		if label == "" {
			label = k
		}
		rows = append(rows, [2]string{label, v})
	}
	return rows
}

const summaryLabelWidth = 28

// summaryBudget is how many lines the confirm page's summary may take
// (0: no limit, the terminal's height is not known).
func (m *setupModel) summaryBudget() int {
	if m.height == 0 {
		return 0
	}
	return max(formHeight(m.height)-confirmLines, 3)
}

// summaryText is the summary as label and value lines, in at most lines
// lines (0: any): two rows a line when one a line does not fit and the
// values are short, and past that the first rows and a count of the
// rest, so the first rows (the workload, the engine) always show.
func (m *setupModel) summaryText(lines int) string {
	rows := m.summaryRows()
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%-*s %s", summaryLabelWidth, r[0], r[1]))
	}
	perLine := 1
	if lines > 0 && len(out) > lines {
		out, perLine = pairUp(out, m.noteWidth())
	}
	if lines > 0 && len(out) > lines {
		shown := out[: lines-1 : lines-1]
		out = append(shown, fmt.Sprintf("… %d more (export the configuration to see all)", len(rows)-perLine*len(shown)))
	}
	return strings.Join(out, "\n") + "\n"
}

// noteWidth is the width a note's text has on the confirm page.
func (m *setupModel) noteWidth() int {
	w := m.width
	if w == 0 {
		w = m.termWidth
	}
	if w == 0 {
		w = fallbackWidth
	}
	return w - 6 // the form's border and the note's padding
}

// pairUp puts two rows on a line when two of the widest fit in width
// (it returns 2), else it returns the rows as they are (and 1).
func pairUp(rows []string, width int) ([]string, int) {
	col := 0
	for _, r := range rows {
		col = max(col, utf8.RuneCountInString(r)+3)
	}
	if 2*col > width {
		return rows, 1
	}
	var out []string
	for i := 0; i < len(rows); i += 2 {
		if i+1 == len(rows) {
			out = append(out, rows[i])
			break
		}
		out = append(out, fmt.Sprintf("%-*s%s", col, rows[i], rows[i+1]))
	}
	return out, 2
}

// summary is the styled summary printed when the setup ends.
func (m *setupModel) summary() string {
	var b strings.Builder
	b.WriteString(m.st.title.Render(" Configuration summary") + "\n")
	for _, r := range m.summaryRows() {
		b.WriteString(m.st.label.Render(fmt.Sprintf(" %-*s ", summaryLabelWidth, r[0])) + m.st.value.Render(ansiFree(r[1])) + "\n")
	}
	return b.String()
}

// isShown tells whether a registered key was on a page the person saw or
// skipped: the LMCache URL and tokens per GB are exclusive, and neither is
// asked of an engine that serves its own /status.
func (m *setupModel) isShown(key string) bool {
	_, url := m.entries[KeyLMCacheURL]
	_, tok := m.entries[KeyTokensPerGB]
	if url && tok && slices.Contains(m.asked, KeyLMCacheURL) && slices.Contains(m.asked, KeyTokensPerGB) {
		switch key {
		case KeyLMCacheURL:
			return m.hasLMCache && !m.engineServesStatus()
		case KeyTokensPerGB:
			return !m.hasLMCache && !m.engineServesStatus()
		}
	}
	return true
}

// engineServesStatus applies Setup.EngineServesStatus to the engine URL
// as answered (or as given, when it was not asked).
func (m *setupModel) engineServesStatus() bool {
	if m.s.EngineServesStatus == nil {
		return false
	}
	if e, ok := m.entries[KeyEngineURL]; ok {
		return m.s.EngineServesStatus(e.text())
	}
	for _, f := range m.s.General {
		if f.Key == KeyEngineURL {
			return m.s.EngineServesStatus(strings.TrimSpace(f.Value))
		}
	}
	return false
}

func (m *setupModel) outcome() Outcome {
	o := Outcome{Action: m.action, Workload: m.workload, Values: map[string]string{}}
	for _, k := range m.shown {
		if m.isShown(k) {
			o.Values[k] = m.entries[k].text()
		}
	}
	if o.Action == ActionExport {
		o.ExportPath = strings.TrimSpace(m.exportPath)
	}
	return o
}

// escapeNote protects text from the markdown-like markup of huh notes.
func escapeNote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "_", `\_`, "*", `\*`, "`", "\\`")
	return r.Replace(s)
}

// ansiFree drops control characters a value could carry into the form.
func ansiFree(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' {
			return -1
		}
		return r
	}, s)
}
