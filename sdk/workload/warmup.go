package workload

import "fmt"

// SequentialWarmup is the warmup phase of a workload that fills the
// engine's cache unit by unit before measuring (a document, a session's
// history): N requests, each sent once the previous one has finished,
// then Done. Build one in New and answer the warmup phase's Steps with its
// Step:
//
//	w.warmup = workload.SequentialWarmup{N: len(docs), Log: env.Logger, What: "documents sent",
//		Request: func(i int) workload.Request {
//			return workload.Chat("warmup_doc"+strconv.Itoa(i), workload.User(w.document(i))).WithMaxTokens(1)
//		}}
//
//	func (w *qa) Step(_ context.Context, in workload.StepInput) (workload.StepOutput, error) {
//		return workload.ByPhase(in, w.warmup.Step, w.measureStep)
//	}
//
// It logs "Warmup i/N" (info) as it hands over the i-th request and
// "Warmup complete: N <What>" once the last has finished.
type SequentialWarmup struct {
	N int
	// Request builds the i-th warmup request (0 ≤ i < N) when it is due.
	Request func(i int) Request
	// Log receives the progress lines (the zero Logger: none).
	Log Logger
	// What the closing line counts: "documents sent", "sessions".
	What string
	sent int
}

// Step answers a warmup Step: wait while a request is in flight, else
// send the next one and wait for it, and be done after the last.
func (s *SequentialWarmup) Step(in StepInput) StepOutput {
	if in.InFlight > 0 {
		return WaitForFinish()
	}
	if s.sent == s.N {
		s.Log.Info().Msgf("Warmup complete: %d %s", s.N, s.What)
		return Done()
	}
	i := s.sent
	s.sent++
	s.Log.Info().Msgf("Warmup %d/%d", s.sent, s.N)
	return Send(s.Request(i)).WaitForFinish()
}

// ByPhase answers a Step with warmup's answer in the warmup phase and
// measure's in the measure phase; any other phase is an error.
func ByPhase(in StepInput, warmup, measure func(StepInput) StepOutput) (StepOutput, error) {
	switch in.Phase {
	case Warmup:
		return warmup(in), nil
	case Measure:
		return measure(in), nil
	}
	return StepOutput{}, fmt.Errorf("unknown phase %v", in.Phase)
}
