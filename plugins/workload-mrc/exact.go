package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/lmbench/lmbench/sdk/workload"
)

// fillerCandidates are probed for one-token words; each text prefers the
// original's filler word ("help", "hi", "tell") when it is one token.
var fillerCandidates = []string{"help", "hi", "tell", "the", "a", "and", "of", "to", "is"}

// exactTexts is multi-round-chat sized in the engine's tokens: every
// system prompt, pre-filled history and query costs exactly its option's
// length, and the session count follows from what a warmup prompt costs
// (the template's tokens, the acknowledgement and the greeting included).
type exactTexts struct {
	systems, histories []string // session i's ("" for another shard's)
	query              string
	warmTokens         int   // session 0's warmup prompt
	warm               []int // session i's warmup prompt, stated with it
	// first is session i's first measured round's prompt (its
	// conversation's, after a restart too), stated with it.
	first []int
	tok   *workload.Tokenizer // counts each later round's prompt (OnFinished)
}

func buildExact(o Options, env workload.Env) (*exactTexts, int, error) {
	ctx, tok := env.Context, env.Tokenizer
	vocab, err := tok.OneTokenWords(ctx, fillerCandidates)
	if err != nil {
		return nil, 0, err
	}
	prefer := func(w string) []string {
		if slices.Contains(vocab, w) {
			return []string{w}
		}
		return vocab[:1]
	}
	build := func(opt string, prefixes []string, filler string, n int) ([]string, error) {
		out, err := tok.ExactTexts(ctx, prefixes, prefer(filler), n)
		if err != nil {
			return nil, fmt.Errorf("%s %d: %w", opt, n, err)
		}
		return out, nil
	}
	e := &exactTexts{}
	sys0, err := build("shared-prompt-length", []string{systemPrefix(0)}, "help", o.SharedPromptLength)
	if err != nil {
		return nil, 0, err
	}
	hist0, err := build("chat-history-length", []string{historyPrefix(0)}, "hi", o.ChatHistoryLength)
	if err != nil {
		return nil, 0, err
	}
	counts, err := tok.CountChats(ctx, warmupChat(sys0[0], hist0[0]))
	if err != nil {
		return nil, 0, err
	}
	e.warmTokens = counts[0]
	n, err := numSessionsOf(env.KVCacheVolumeGB, env.TokensPerGB, float64(e.warmTokens))
	if err == nil {
		err = checkSessions(env.Shard, n)
	}
	if err != nil {
		return nil, 0, err
	}
	// A sharded run builds and counts its own sessions' texts alone: each
	// is built from its own header, so they are the unsharded run's.
	var owned []int
	var sys, hist []string
	for i := range n {
		if env.Shard.Owns(i) {
			owned = append(owned, i)
			sys, hist = append(sys, systemPrefix(i)), append(hist, historyPrefix(i))
		}
	}
	if sys, err = build("shared-prompt-length", sys, "help", o.SharedPromptLength); err != nil {
		return nil, 0, err
	}
	if hist, err = build("chat-history-length", hist, "hi", o.ChatHistoryLength); err != nil {
		return nil, 0, err
	}
	q, err := build("user-input-length", []string{""}, "tell", o.UserInputLength)
	if err != nil {
		return nil, 0, err
	}
	e.query, e.tok = q[0], tok
	// Each session's warmup prompt, then its first measured round's, in
	// one query.
	chats := make([]workload.TokenChat, 2*len(owned))
	for k := range owned {
		chats[k] = warmupChat(sys[k], hist[k])
		chats[len(owned)+k] = e.roundChat(sys[k], hist[k], nil)
	}
	counts, err = tok.CountChats(ctx, chats...)
	if err != nil {
		return nil, 0, err
	}
	e.systems, e.histories, e.warm, e.first = make([]string, n), make([]string, n), make([]int, n), make([]int, n)
	for k, i := range owned {
		e.systems[i], e.histories[i], e.warm[i], e.first[i] = sys[k], hist[k], counts[k], counts[len(owned)+k]
	}
	return e, n, nil
}

// roundChat is a measured round's messages, as session.messages builds
// them: the system prompt, the history and its acknowledgement, each
// answered round (the query and the answer's text), then the query.
func (e *exactTexts) roundChat(system, history string, answers []string) workload.TokenChat {
	msgs := []workload.TokenMessage{{Role: "system", Content: system}, {Role: "user", Content: history},
		{Role: "assistant", Content: understood}}
	for _, a := range answers {
		msgs = append(msgs, workload.TokenMessage{Role: "user", Content: e.query}, workload.TokenMessage{Role: "assistant", Content: a})
	}
	return workload.TokenChat{Messages: append(msgs, workload.TokenMessage{Role: "user", Content: e.query})}
}

// stateNext counts session s's next round's prompt (0: the count failed,
// and the round goes out unstated, with a warning).
func (w *multiRoundChat) stateNext(ctx context.Context, s *session) {
	e := w.exact
	if len(s.exchanges) == 0 {
		s.stated = e.first[s.id]
		return
	}
	answers := make([]string, len(s.exchanges))
	for k, x := range s.exchanges {
		answers[k] = x.answerText
	}
	counts, err := e.tok.CountChats(ctx, e.roundChat(e.systems[s.id], e.histories[s.id], answers))
	if err != nil {
		w.log.Warn().Err(err).Msgf("session %d: its next round's prompt tokens could not be counted; it goes out unstated", s.id)
		s.stated = 0
		return
	}
	s.stated = counts[0]
}

func systemPrefix(i int) string {
	return "Session " + strconv.Itoa(i) + ". You are a helpful assistant."
}
func historyPrefix(i int) string { return "[Session " + strconv.Itoa(i) + " history]" }

// warmupChat is a warmup request's messages, as session.messages builds them.
func warmupChat(system, history string) workload.TokenChat {
	return workload.TokenChat{Messages: []workload.TokenMessage{
		{Role: "system", Content: system}, {Role: "user", Content: history},
		{Role: "assistant", Content: understood}, {Role: "user", Content: warmupQuery},
	}}
}

func (e *exactTexts) banner(o Options) []workload.Field {
	return []workload.Field{
		{Label: "Tokenizer", Value: "the model's (lengths exact)"},
		{Label: "Warmup prompt", Value: fmt.Sprintf("%d tokens (prompt + history + %d of chat template and turns)",
			e.warmTokens, e.warmTokens-o.SharedPromptLength-o.ChatHistoryLength)},
	}
}
