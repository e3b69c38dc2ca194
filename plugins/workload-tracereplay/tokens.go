package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/lmbench/lmbench/sdk/workload"
)

// oneTokenCandidates are probed for the one-token words that top a block
// up to its exact length: letters and short words, one token in every
// common tokenizer after a space.
var oneTokenCandidates = strings.Fields("a b c d e f g h i j k l m n o p q r s t u v w x y z the and of to in is it on at as be by or an")

// inTokens sizes the prompts in the model's tokens (the host's tokenizer):
// every vocabulary word's cost after a space is counted once, so a block
// of the trace is exactly block-size tokens (its words' costs add up,
// topped up with one-token words), and every request's whole chat
// (template included) is counted to state it. It fails when the
// tokenizer merges across words, where no length can be exact.
func (p *prompts) inTokens(ctx context.Context, tok *workload.Tokenizer) error {
	probes := make([]string, 0, 2*len(p.vocab))
	for _, w := range p.vocab {
		probes = append(probes, w, w+" "+w)
	}
	counts, err := tok.Count(ctx, probes...)
	if err != nil {
		return fmt.Errorf("sizing the trace in the model's tokens: %w", err)
	}
	p.cost = make([]int, len(p.vocab))
	for i := range p.vocab {
		if p.cost[i] = counts[2*i+1] - counts[2*i]; p.cost[i] < 1 {
			return fmt.Errorf("sizing the trace in the model's tokens: %q costs %d tokens after a space: this tokenizer merges across words",
				p.vocab[i], p.cost[i])
		}
	}
	if p.ones, err = tok.OneTokenWords(ctx, oneTokenCandidates); err != nil {
		return fmt.Errorf("sizing the trace in the model's tokens: %w", err)
	}
	return nil
}

// chatOverhead is what the chat template adds to a prompt's text, in
// tokens, measured on one prompt.
func chatOverhead(ctx context.Context, tok *workload.Tokenizer, text string) (int, error) {
	c, err := tok.CountChats(ctx, userChat(text))
	if err != nil {
		return 0, err
	}
	t, err := tok.Count(ctx, text)
	if err != nil {
		return 0, err
	}
	return c[0] - t[0], nil
}

func userChat(text string) workload.TokenChat {
	return workload.TokenChat{Messages: []workload.TokenMessage{{Role: "user", Content: text}}}
}

// exactPrompts builds every planned request's prompt in the model's
// tokens: input_length less the chat template's tokens, so the whole
// prompt is the trace's length, then counts each chat to state it.
func (w *replay) exactPrompts(ctx context.Context, tok *workload.Tokenizer) error {
	if err := w.prompts.inTokens(ctx, tok); err != nil {
		return err
	}
	first := w.plan[0]
	over, err := chatOverhead(ctx, tok, w.prompts.text(first.hashIDs, first.input))
	if err != nil {
		return fmt.Errorf("sizing the trace in the model's tokens: %w", err)
	}
	w.template = over
	chats := make([]workload.TokenChat, 0, len(w.plan))
	idx := make([]int, 0, len(w.plan))
	w.texts = make([]string, len(w.plan))
	for i, p := range w.plan {
		if !w.shard.Owns(i) {
			continue
		}
		w.texts[i] = w.prompts.text(p.hashIDs, max(p.input-over, 1))
		chats, idx = append(chats, userChat(w.texts[i])), append(idx, i)
	}
	counts, err := tok.CountChats(ctx, chats...)
	if err != nil {
		return fmt.Errorf("sizing the trace in the model's tokens: %w", err)
	}
	w.stated = make([]int, len(w.plan))
	for k, i := range idx {
		w.stated[i] = counts[k]
	}
	return nil
}
