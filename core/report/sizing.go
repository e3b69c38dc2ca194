package report

import "fmt"

// Sizing is what counting the prompts' tokens cost before the first
// request, a phase of its own: the time spent answering the workload's
// queries and the engine calls (POST /tokenize) made for them.
type Sizing struct {
	Seconds     float64
	EngineCalls int64
}

// sizingSection is the terminal's line, only when a tokenizer counted.
func sizingSection(s *Sizing) string {
	if s == nil {
		return ""
	}
	return center(" Sizing ", Width, '-') + "\n" +
		entry{"Prompts sized in", fmt.Sprintf("%.3f s, %d engine calls", s.Seconds, s.EngineCalls)}.String() + "\n"
}

// withSizing adds the sizing phase's cost, only when a tokenizer counted.
func withSizing(doc []kv, s *Sizing) []kv {
	if s == nil {
		return doc
	}
	return append(doc, kv{"sizing", []kv{{"seconds", s.Seconds}, {"engine_calls", s.EngineCalls}}})
}
