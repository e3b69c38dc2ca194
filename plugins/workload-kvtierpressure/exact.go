package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lmbench/lmbench/sdk/workload"
)

// fillerCandidates are probed for one-token words to top texts up with.
var fillerCandidates = []string{"hi", "the", "a", "and", "of", "to", "is"}

// exactTexts sizes kv-tier-pressure in the model's tokens (the host's
// tokenizer): every document and the system prompt are the original's
// seeded words, as many as fit, topped up with one-token filler to
// exactly --ktp-context-length and --ktp-system-prompt-length tokens, so
// the pool, the working set and what the cache holds are in the unit the
// engine counts.
func (w *pressure) exactTexts(env workload.Env) error {
	ctx, tok := env.Context, env.Tokenizer
	fill, err := tok.OneTokenWords(ctx, fillerCandidates)
	if err != nil {
		return err
	}
	fill = fill[:1]
	grow := make([]func(int) string, w.pool)
	for d := range grow {
		grow[d] = func(k int) string { return randomText(k, w.vocab, w.seed+1+int64(d)) }
	}
	if w.texts, err = tok.FitTexts(ctx, grow, fill, w.o.ContextLength); err != nil {
		return fmt.Errorf("context-length %d: %w", w.o.ContextLength, err)
	}
	if w.o.SystemPromptLength > 0 {
		s, err := tok.FitTexts(ctx, []func(int) string{func(k int) string { return randomText(k, w.vocab, w.seed+2) }},
			fill, w.o.SystemPromptLength)
		if err != nil {
			return fmt.Errorf("system-prompt-length %d: %w", w.o.SystemPromptLength, err)
		}
		w.system = s[0]
	}
	return nil
}

// statePrompts counts the whole chat (template included) of every request
// this process sends, each distinct set of documents once, so every
// prompt's length is stated in the model's tokens.
func (w *pressure) statePrompts(env workload.Env) error {
	type ref struct {
		list []request
		i    int
	}
	index := map[string]int{}
	var chats []workload.TokenChat
	var refs [][]ref
	add := func(list []request, i int) {
		key := docsKey(list[i].docs)
		n, ok := index[key]
		if !ok {
			n = len(chats)
			index[key] = n
			chats = append(chats, w.tokenChat(list[i].docs))
			refs = append(refs, nil)
		}
		refs[n] = append(refs[n], ref{list, i})
	}
	for i := range w.sweep {
		if w.shard.Owns(i) {
			add(w.sweep, i)
		}
	}
	for i := range w.measured {
		if w.shard.Owns(i) {
			add(w.measured, i)
		}
	}
	counts, err := env.Tokenizer.CountChats(env.Context, chats...)
	if err != nil {
		return fmt.Errorf("stating the prompts' tokens: %w", err)
	}
	for n, rs := range refs {
		for _, r := range rs {
			r.list[r.i].stated = counts[n]
		}
	}
	return nil
}

// tokenChat is chat's messages as the tokenizer counts them.
func (w *pressure) tokenChat(docs []int) workload.TokenChat {
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = w.texts[d]
	}
	var msgs []workload.TokenMessage
	if w.system != "" {
		msgs = append(msgs, workload.TokenMessage{Role: "system", Content: w.system})
	}
	msgs = append(msgs, workload.TokenMessage{Role: "user", Content: strings.Join(texts, "\n\n")})
	return workload.TokenChat{Messages: msgs}
}

func docsKey(docs []int) string {
	var b strings.Builder
	for _, d := range docs {
		b.WriteString(strconv.Itoa(d))
		b.WriteByte(' ')
	}
	return b.String()
}
