package main

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/arrival"
	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/pyrepr"
	"github.com/lmbench/lmbench/sdk/workload"
)

// maxSessions bounds the derived session count: beyond it the run could
// not hold its sessions in memory anyway.
const maxSessions = 1 << 20

// maxLength bounds each length option: 16M tokens is far past any model's
// context, and a typo beyond it would otherwise end in an out-of-memory
// crash of the plugin instead of an error naming the option.
const maxLength = 1 << 24

// understood is the assistant's reply to the pre-filled history.
const understood = "Understood, I have read the context above."

// warmupQuery is the user turn of every warmup request.
const warmupQuery = "Hello"

// Validate checks the options with the original's messages, all at once.
func (o Options) Validate() error {
	var errs []error
	if o.SharedPromptLength <= 0 {
		errs = append(errs, option.Errorf("shared-prompt-length", "shared_prompt_length must be positive, got %d", o.SharedPromptLength))
	}
	if o.ChatHistoryLength <= 0 {
		errs = append(errs, option.Errorf("chat-history-length", "chat_history_length must be positive, got %d", o.ChatHistoryLength))
	}
	if o.UserInputLength < 1 {
		errs = append(errs, option.Errorf("user-input-length", "user_input_length must be >= 1, got %d", o.UserInputLength))
	}
	if o.OutputLength < 1 {
		errs = append(errs, option.Errorf("output-length", "output_length must be >= 1, got %d", o.OutputLength))
	}
	// NaN passes the original's "<= 0" test and infinities make no
	// schedule, so both are refused as well.
	for _, l := range []struct {
		opt, name string
		v         int
	}{
		{"shared-prompt-length", "shared_prompt_length", o.SharedPromptLength},
		{"chat-history-length", "chat_history_length", o.ChatHistoryLength},
		{"user-input-length", "user_input_length", o.UserInputLength},
		{"output-length", "output_length", o.OutputLength},
	} {
		if l.v > maxLength {
			errs = append(errs, option.Errorf(l.opt, "%s must be at most %d tokens, got %d", l.name, maxLength, l.v))
		}
	}
	if !(o.QPS > 0) || math.IsInf(o.QPS, 1) {
		errs = append(errs, option.Errorf("qps", "qps must be positive, got %s", pyrepr.Float(o.QPS)))
	}
	if !(o.Duration > 0) || math.IsInf(o.Duration, 1) {
		errs = append(errs, option.Errorf("duration", "duration must be positive, got %s", pyrepr.Float(o.Duration)))
	}
	// The rate is checked above, with the original's message.
	errs = append(errs, arrival.Names{Kind: "arrival", Burstiness: "burstiness"}.Check(o.Arrival, o.QPS, o.Burstiness))
	return errors.Join(errs...)
}

// numSessions sizes the session set to fill the KV cache:
// max(1, int(kv_cache_volume_gb * tokens_per_gb / (shared_prompt_length +
// chat_history_length))), with the original's float arithmetic and
// truncation.
func numSessions(kvCacheGB float64, tokensPerGB int64, sharedPrompt, history int) (int, error) {
	perSession := float64(sharedPrompt) + float64(history)
	if sharedPrompt <= math.MaxInt-history {
		perSession = float64(sharedPrompt + history) // one rounding, as Python's int sum
	}
	return numSessionsOf(kvCacheGB, tokensPerGB, perSession)
}

// numSessionsOf is numSessions for a session of perSession tokens.
func numSessionsOf(kvCacheGB float64, tokensPerGB int64, perSession float64) (int, error) {
	f := kvCacheGB * float64(tokensPerGB) / perSession
	if math.IsNaN(f) || f >= maxSessions {
		return 0, option.Errorf("chat-history-length",
			"kv_cache_volume_gb * tokens_per_gb / (shared_prompt_length + chat_history_length) = %g sessions, more than the %d supported; raise the lengths or lower the KV cache volume",
			f, maxSessions)
	}
	if f < 1 {
		return 1, nil
	}
	return int(f), nil
}

// repeatWords is word repeated n times, space-joined ("" for n <= 0).
func repeatWords(word string, n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat(word+" ", n-1) + word
}

// systemPrompt is session i's system prompt: a header naming the session,
// padded with "help" to about length words.
func systemPrompt(i, length int) string {
	prefix := "Session " + strconv.Itoa(i) + ". You are a helpful assistant. "
	return prefix + repeatWords("help", length-len(strings.Fields(prefix)))
}

// historyText is session i's pre-filled history, padded with "hi" to about
// length words.
func historyText(i, length int) string {
	prefix := "[Session " + strconv.Itoa(i) + " history] "
	return prefix + repeatWords("hi", length-len(strings.Fields(prefix)))
}

// queryText is the user turn of every measured request.
func queryText(length int) string { return repeatWords("tell", length) }

// exchange is one answered round of a session.
type exchange struct {
	query, answer workload.Segment
	answerText    string // the answer's text, for counting later prompts
}

// session is one chat user: a system prompt, a pre-filled history, the
// rounds answered so far, and whether a request of its is outstanding.
type session struct {
	id        int
	system    workload.Segment
	history   workload.Segment // zero: no pre-filled history
	exchanges []exchange
	inFlight  bool
	// lastPrompt is the engine's prompt tokens of the session's last
	// answered measured round (0: none, or the conversation restarted).
	lastPrompt int
	// stated is the next round's prompt in the model's tokens, counted
	// when the tokenizer sizes the run (exact.go); 0: not counted.
	stated int
}

// messages is the conversation for a new user turn: system, the history
// with its acknowledgement, every answered round in order, then query.
func (s *session) messages(query workload.Segment) []workload.Message {
	msgs := make([]workload.Message, 0, 4+2*len(s.exchanges))
	msgs = append(msgs, workload.System(s.system))
	if s.history != (workload.Segment{}) {
		msgs = append(msgs, workload.User(s.history), workload.Assistant(workload.Text(understood)))
	}
	for _, e := range s.exchanges {
		msgs = append(msgs, workload.User(e.query), workload.Assistant(e.answer))
	}
	return append(msgs, workload.User(query))
}

// answers are the content ids of the session's registered answers.
func (s *session) answers() []string {
	var ids []string
	for _, e := range s.exchanges {
		if e.answer.Ref != "" {
			ids = append(ids, e.answer.Ref)
		}
	}
	return ids
}

// record appends an answered round and makes the session ready again.
func (s *session) record(query, answer workload.Segment, text string) {
	s.exchanges = append(s.exchanges, exchange{query, answer, text})
	s.inFlight = false
}

// pendingRound is a measured request awaiting its answer.
type pendingRound struct {
	session int
	query   workload.Segment
}

type multiRoundChat struct {
	o        Options
	log      zerolog.Logger
	content  *workload.Registry
	sessions []*session
	schedule *arrival.Schedule
	duration time.Duration // o.Duration, saturated
	ahead    time.Duration // how far ahead requests are handed over
	query    workload.Segment
	shard    workload.Shard
	owned    []int // the sessions this shard drives (all when unsharded)
	warmup   workload.SequentialWarmup
	next     int // global index of the next measured request
	pending  map[string]pendingRound
	exact    *exactTexts // lengths in the engine's tokens; nil: in words, as the original
	declare  bool        // the host takes expected reuse (protocol.ExpectedReuse)
}

func newMultiRoundChat(o Options, env workload.Env) (workload.Workload, error) {
	var exact *exactTexts
	var n int
	var err error
	if env.Tokenizer != nil {
		exact, n, err = buildExact(o, env)
	} else {
		n, err = numSessions(env.KVCacheVolumeGB, env.TokensPerGB, o.SharedPromptLength, o.ChatHistoryLength)
	}
	if err == nil {
		err = checkSessions(env.Shard, n)
	}
	if err != nil {
		return nil, err
	}
	schedule, err := arrival.New(o.Arrival, o.QPS, o.Burstiness, env.Seed)
	if err != nil {
		return nil, err // Validate has checked every parameter
	}
	// As many requests fall in the duration as with constant arrivals, as
	// vLLM rescales its random gaps: the achieved rate is the requested one
	// for every seed.
	schedule.Normalize(constantCount(o.QPS, o.Duration))
	w := &multiRoundChat{
		o:        o,
		exact:    exact,
		log:      env.Logger,
		content:  env.Content,
		sessions: make([]*session, n),
		schedule: schedule,
		duration: seconds(o.Duration),
		ahead:    env.Ahead(),
		pending:  map[string]pendingRound{},
		declare:  env.HostHas(protocol.ExpectedReuse),
		shard:    env.Shard,
	}
	for i := range w.sessions {
		w.sessions[i] = &session{id: i}
		if env.Shard.Owns(i) {
			w.owned = append(w.owned, i)
		}
	}
	// One request per session, one at a time, each once the previous one
	// finished. Warmup answers are not recorded.
	w.warmup = workload.SequentialWarmup{N: len(w.owned), Request: w.warmupRequest, Log: env.Logger, What: "sessions"}
	return w, nil
}

// seconds converts s seconds to a Duration, saturating instead of overflowing.
func seconds(s float64) time.Duration {
	ns := math.Round(s * 1e9)
	if ns >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ns)
}

// due is when measured request k is due after the phase started: k/qps
// seconds with constant arrivals, else the sum of k gaps drawn from the
// seed. Each due time is computed from k, never from the previous send, so
// neither rounding nor a late Step accumulates.
func (w *multiRoundChat) due(k int) time.Duration { return w.schedule.Due(k) }

// RequestedRate is --mrc-qps: the schedule's rate.
func (w *multiRoundChat) RequestedRate() float64 { return w.o.QPS }

func (w *multiRoundChat) Resolved() map[string]any {
	return map[string]any{"num-concurrent-users": len(w.sessions)}
}

// PlannedRequests is the number of due times before the duration ends: what
// is sent when every session is answered before its next turn comes up;
// in a sharded run, those of the shard's sessions.
func (w *multiRoundChat) PlannedRequests() int {
	return ownedRequests(w.shard, w.dueInDuration(), len(w.sessions))
}

// dueInDuration is the number of due times before the duration ends (0:
// unknown).
func (w *multiRoundChat) dueInDuration() int {
	if w.o.Arrival == arrival.Constant {
		return constantCount(w.o.QPS, w.o.Duration)
	}
	if n := math.Ceil(w.o.Duration * w.o.QPS); n > arrival.MaxNormalize {
		return 0 // unknown rather than slow to count
	}
	k := 0
	for w.due(k) < w.duration {
		k++
	}
	return k
}

// constantCount is the number of constant due times k/qps before the
// duration (0: too many to be meaningful).
func constantCount(qps, duration float64) int {
	n := math.Ceil(duration * qps)
	if n > math.MaxInt32 {
		return 0 // unknown rather than absurd
	}
	due := func(k int) time.Duration { return seconds(float64(k) / qps) }
	end := seconds(duration)
	k := int(n)
	for k > 0 && due(k-1) >= end {
		k--
	}
	for due(k) < end {
		k++
	}
	return k
}

func (w *multiRoundChat) Banner() []workload.Field {
	tokens := func(n int) string { return strconv.Itoa(n) + " tokens" }
	b := []workload.Field{
		{Label: "Concurrent users", Value: strconv.Itoa(len(w.sessions))},
		{Label: "Prompt length", Value: tokens(w.o.SharedPromptLength)},
		{Label: "History length", Value: tokens(w.o.ChatHistoryLength)},
		{Label: "Query length", Value: tokens(w.o.UserInputLength)},
		{Label: "Output length", Value: tokens(w.o.OutputLength)},
		{Label: "QPS", Value: pyrepr.Float(w.o.QPS)},
		{Label: "Duration", Value: pyrepr.Float(w.o.Duration) + "s"},
	}
	if w.o.Arrival != arrival.Constant {
		// The original's banner, for the original's constant schedule.
		b = append(b, workload.Field{Label: "Arrival", Value: w.schedule.String()})
	}
	if w.exact != nil {
		b = append(b, w.exact.banner(w.o)...)
	}
	if w.shard.Sharded() {
		b = append(b, workload.ShardField(w.shard, "sessions", len(w.sessions)))
	}
	return b
}

// session returns session i with its prompt and history registered, so
// each crosses the process boundary once, with the first request using it.
func (w *multiRoundChat) session(i int) *session {
	s := w.sessions[i]
	if s.system == (workload.Segment{}) {
		id := "s" + strconv.Itoa(i)
		system, history := systemPrompt(i, w.o.SharedPromptLength), historyText(i, w.o.ChatHistoryLength)
		if w.exact != nil {
			system, history = w.exact.systems[i], w.exact.histories[i]
		}
		s.system = w.content.Register(id+".system", system)
		s.history = w.content.Register(id+".history", history)
	}
	return s
}

// queryRef is the measured user turn, registered once.
func (w *multiRoundChat) queryRef() workload.Segment {
	if w.query == (workload.Segment{}) {
		text := queryText(w.o.UserInputLength)
		if w.exact != nil {
			text = w.exact.query
		}
		w.query = w.content.Register("query", text)
	}
	return w.query
}

func (w *multiRoundChat) Step(_ context.Context, in workload.StepInput) (workload.StepOutput, error) {
	return workload.ByPhase(in, w.warmup.Step, w.measureStep)
}

// warmupRequest is the warmup's k-th request: the first of the shard's
// k-th session.
func (w *multiRoundChat) warmupRequest(k int) workload.Request {
	i := w.owned[k]
	s := w.session(i)
	req := workload.Chat("warmup_s"+strconv.Itoa(i), s.messages(workload.Text(warmupQuery))...).
		WithMaxTokens(1).
		Tag("session", strconv.Itoa(i))
	if w.exact != nil {
		req = req.WithPromptTokens(w.exact.warm[i])
	}
	return req
}

// measureStep sends every request that is due, in round-robin session
// order, each stamped with its due time (k/qps with constant arrivals). A
// session whose previous request is unanswered holds the queue (no
// skipping to the next session): the step then waits for an answer, and
// the requests that fell behind go out back to back once it arrives.
// Nothing is sent once the duration has passed; the host then awaits what
// is in flight. On a host with look-ahead the requests due within the
// window go over ahead too, as far as their sessions are ready (a
// session's next turn needs its last answer), and the host sends each when
// due.
func (w *multiRoundChat) measureStep(in workload.StepInput) workload.StepOutput {
	var reqs []workload.Request
	for {
		if in.Offset >= w.duration {
			return workload.Send(reqs...).Done()
		}
		for !w.shard.Owns(w.next % len(w.sessions)) {
			w.next++ // another shard's session: that shard sends it
		}
		due := w.due(w.next)
		if due >= w.duration {
			// The phase lasts the duration even when the next request is
			// due after it.
			return workload.Send(reqs...).WakeAt(w.duration)
		}
		if due > in.Offset+w.ahead {
			return workload.Send(reqs...).WakeAt(min(workload.AheadWake(w.ahead, due, in.Offset), w.duration))
		}
		if w.ahead > 0 && len(reqs) == workload.AheadBatch {
			return workload.Send(reqs...).WakeAt(in.Offset)
		}
		s := w.session(w.next % len(w.sessions))
		if s.inFlight {
			if due > in.Offset {
				// Not due yet: its session may answer in time.
				return workload.Send(reqs...).WaitForFinishOr(min(due, w.duration))
			}
			return workload.Send(reqs...).WaitForFinishOr(w.duration)
		}
		id := "s" + strconv.Itoa(s.id) + "_r" + strconv.Itoa(w.next)
		query := w.queryRef()
		req := workload.Chat(id, s.messages(query)...).
			WithMaxTokens(w.o.OutputLength).
			At(due).
			Tag("session", strconv.Itoa(s.id)).
			Tag("round", strconv.Itoa(len(s.exchanges)))
		if w.declare {
			req = req.WithExpectedReuse(w.expectedReuse(s), "")
		}
		if w.exact != nil && len(s.exchanges) == 0 {
			s.stated = w.exact.first[s.id] // no answer counted it (no warmup, a restart)
		}
		if s.stated > 0 {
			req = req.WithPromptTokens(s.stated)
		}
		s.inFlight = true
		w.pending[id] = pendingRound{session: s.id, query: query}
		w.log.Debug().Msgf("Session %d dispatched request %d", s.id, w.next)
		reqs = append(reqs, req)
		w.next++
	}
}

// OnFinished records each measured answer into its session, which makes
// the session ready for its next round. A failed request is recorded with
// an empty answer, and the session goes on. Warmup answers are not kept.
func (w *multiRoundChat) OnFinished(ctx context.Context, results []workload.Result) error {
	for _, r := range results {
		if r.Phase == workload.Warmup {
			if !r.Success {
				sid, _ := strings.CutPrefix(r.ID, "warmup_s")
				w.log.Warn().Msgf("Warmup session %s failed: %s", sid, r.Error)
			}
			continue
		}
		p, ok := w.pending[r.ID]
		if !ok {
			continue
		}
		delete(w.pending, r.ID)
		s := w.sessions[p.session]
		if w.o.MaxRounds > 0 && len(s.exchanges)+1 >= w.o.MaxRounds {
			// The conversation is over: the next round starts a new one,
			// and no request will use these answers again.
			w.content.Release(s.answers()...)
			s.exchanges = s.exchanges[:0]
			s.inFlight, s.lastPrompt = false, 0
			continue
		}
		s.lastPrompt = 0
		if r.Success {
			s.lastPrompt = r.InputTokens
		}
		answer, text := workload.Text(""), ""
		if r.Success && r.Text != "" {
			answer, text = w.content.Register(r.ID+".answer", r.Text), r.Text
		}
		s.record(p.query, answer, text)
		if w.exact != nil {
			w.stateNext(ctx, s)
		}
	}
	return nil
}

// generationSlack is what the ledger leaves off a session's last prompt
// when it expects it back cached: the chat template's generation prompt
// at its end, which the next round's rendering may not repeat.
const generationSlack = 8

// expectedReuse is what session s's next round can find cached: its last
// answered round's whole prompt (the next round repeats it and appends
// the answer and a new query), less the generation prompt; with no
// answered round yet (the first measured round, a conversation started
// over, a failed round) the system prompt and pre-filled history its
// warmup request carried. Lengths are the options' (the engine's tokens
// when exact, else words); the host aligns the count down to a block.
func (w *multiRoundChat) expectedReuse(s *session) int {
	shared := w.o.SharedPromptLength + w.o.ChatHistoryLength
	if len(s.exchanges) > 0 && s.lastPrompt > generationSlack {
		return max(shared, s.lastPrompt-generationSlack)
	}
	return shared
}
