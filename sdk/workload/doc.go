// Package workload is how a workload plugin is written: declare options as a
// tagged struct (see package option), implement Step and OnFinished, and
// call Serve from main. A complete plugin with tests is in
// sdk/examples/fixedprefix.
//
//	type Options struct {
//		Requests int `opt:"requests" help:"Requests to send." min:"1"`
//	}
//
//	var Definition = workload.Definition[Options]{
//		Name: "fixed", Prefix: "fx", Summary: "N identical requests",
//		Defaults: Options{Requests: 10},
//		New: func(o Options, env workload.Env) (workload.Workload, error) { return &fixed{o: o}, nil },
//	}
//
//	type fixed struct {
//		o    Options
//		sent int
//	}
//
//	func (w *fixed) Step(_ context.Context, in workload.StepInput) (workload.StepOutput, error) {
//		if in.Phase == workload.Warmup || w.sent == w.o.Requests {
//			return workload.Done(), nil
//		}
//		w.sent++
//		id := "q" + strconv.Itoa(w.sent)
//		return workload.Send(workload.Chat(id, workload.User(workload.Text("Hello?")))).
//			WakeAt(in.Offset + time.Second), nil
//	}
//
//	func (w *fixed) OnFinished(context.Context, []workload.Result) error { return nil }
//
//	func main() { workload.Serve(Definition) }
//
// # How a run works
//
// The host owns the clock, the engine sender and all measurement. It runs
// two phases, WARMUP then MEASURE, each with its own clock starting at 0.
// In each phase it calls Step, sends the requests Step returned, and calls
// Step again when the StepOutput asks: at once (Send alone), at a phase
// offset (WakeAt), when any request finishes (WaitForFinish), whichever
// comes first (WaitForFinishOr), once fewer requests are handed over than
// a number (WaitForInFlightBelow), or never again (Done, after which the
// host waits for the phase's requests to finish). Every finished request
// is delivered to OnFinished before the next Step (the SDK takes results
// the host sends inside that Step, one round trip instead of two); those
// that finish after a phase's last Step are delivered before the next
// phase starts. Step and OnFinished are called from one loop, never
// concurrently.
//
// Request ids must be unique in a run; tags (Request.Tag) are copied into
// every exported record, and their keys belong in Definition.TagKeys.
// Long text is registered once with Env.Content and referenced by requests
// (the returned Segment), so it crosses the process boundary once;
// Registry.Release drops it when no later request needs it. The host
// checks every request (package protocol's Validator) and stops the run
// on one it cannot send, naming the request and the field.
//
// A warmup that puts the workload's units in the engine's cache one at a
// time (each document once, answered, before measuring) is
// SequentialWarmup: N requests, each sent once the previous one has
// finished, logged as it goes. ByPhase answers Step with one function per
// phase:
//
//	func (w *qa) Step(_ context.Context, in workload.StepInput) (workload.StepOutput, error) {
//		return workload.ByPhase(in, w.warmup.Step, w.measureStep)
//	}
//
// A closed-loop workload can hand over requests ahead of a free slot:
// Request.WithMaxInFlight has the host hold one until fewer are in
// flight and send it the moment a request finishes, with no round trip
// to the plugin (needs Env.HostHas(protocol.LookAhead)).
//
// Lengths in the engine's tokens: with Definition.CountsTokens set and a
// host that has a tokenizer, Env.Tokenizer counts texts and chats (the
// chat template included) as the engine does; OneTokenWords and
// ExactTexts build texts of exactly n tokens from them, and
// Request.WithPromptTokens states a request's length for the summary. A
// nil Env.Tokenizer means lengths are in whitespace words.
//
// A workload may also implement Bannerer (lines for the banner printed
// before the run), Resolver (derived settings reported with the options)
// and Planner (the number of measured requests, for progress).
//
// Configure errors point at options: return an *option.FieldError (or
// several joined with errors.Join) from the options' Validate method or
// from New, and the host shows it as --<prefix>-<option>: <message>.
//
// # Testing
//
// Package sdktest runs a Definition in-process on a virtual clock:
// sdktest.Run returns a transcript of what was sent and when, and
// sdktest.CheckWorkload checks the plugin contract. StepOutput.String makes
// Step's answer easy to compare in unit tests.
//
// Plugins log with Env.Logger (it reaches the host's log at the right
// level) and never write to stdout, which go-plugin uses for its handshake.
package workload
