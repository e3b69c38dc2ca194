package main

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/lmbench/lmbench/sdk/workload"
)

// fillerCandidates are probed for one-token words: the original's filler
// word first, so a tokenizer that counts "hi" as one token gets the
// original's "hi hi hi …" body.
var fillerCandidates = []string{"hi", "the", "a", "and", "of", "to", "in", "is"}

// exactDocs is long-doc-qa sized in the engine's tokens: every document
// costs exactly document-length tokens by the host's tokenizer, and the
// document count follows from what a warmup request costs (document plus
// chat template).
type exactDocs struct {
	texts []string // document d's text ("" for another shard's)
	// warmTokens is a warmup request's prompt: a document in the chat
	// template; the KV cache is sized in these.
	warmTokens int
	// questionTokens[q] is what question q adds to a document's request,
	// the template included: the fixed scaffolding.
	questionTokens []int
	// warm[d] and asked[d][q] are the prompts' tokens of
	// document d's warmup and question requests, stated with each request.
	warm  []int
	asked [][]int
}

// buildExact probes the vocabulary, builds one document to measure the
// chat template's cost, sizes the set from the KV cache in tokens, then
// builds every document exactly.
func buildExact(o Options, env workload.Env) (*exactDocs, int, error) {
	ctx, tok := env.Context, env.Tokenizer
	vocab, err := tok.OneTokenWords(ctx, fillerCandidates)
	if err != nil {
		return nil, 0, err
	}
	first, err := tok.ExactTexts(ctx, []string{documentPrefix(0)}, vocab, o.DocumentLength)
	if err != nil {
		return nil, 0, fmt.Errorf("document-length %d: %w", o.DocumentLength, err)
	}
	chats := []workload.TokenChat{userChat(first[0])}
	for q := range questions {
		chats = append(chats, userChat(first[0]+questionText(q)))
	}
	counts, err := tok.CountChats(ctx, chats...)
	if err != nil {
		return nil, 0, err
	}
	e := &exactDocs{warmTokens: counts[0]}
	for _, c := range counts[1:] {
		e.questionTokens = append(e.questionTokens, c-o.DocumentLength)
	}
	n, err := numDocuments(env.KVCacheVolumeGB, env.TokensPerGB, e.warmTokens)
	if err == nil {
		err = checkDocuments(env.Shard, n)
	}
	if err != nil {
		return nil, 0, err
	}
	// A sharded run builds and counts its own documents alone: each is
	// built from its own header, so they are the unsharded run's.
	var owned, prefixes []string
	var docs []int
	for d := range n {
		if env.Shard.Owns(d) {
			docs, prefixes = append(docs, d), append(prefixes, documentPrefix(d))
		}
	}
	if owned, err = tok.ExactTexts(ctx, prefixes, vocab, o.DocumentLength); err != nil {
		return nil, 0, fmt.Errorf("document-length %d: %w", o.DocumentLength, err)
	}
	// Every request's prompt, counted once, to state with it.
	asks := o.QueryPerDocument
	chats = chats[:0]
	for _, text := range owned {
		chats = append(chats, userChat(text))
		for q := range asks {
			chats = append(chats, userChat(text+questionText(q)))
		}
	}
	if counts, err = tok.CountChats(ctx, chats...); err != nil {
		return nil, 0, err
	}
	e.texts, e.warm, e.asked = make([]string, n), make([]int, n), make([][]int, n)
	for i, d := range docs {
		row := counts[i*(1+asks) : (i+1)*(1+asks)]
		e.texts[d], e.warm[d], e.asked[d] = owned[i], row[0], row[1:]
	}
	return e, n, nil
}

// documentPrefix is the distinct header of document d, as documentText.
func documentPrefix(d int) string { return "Document " + strconv.Itoa(d) + ":" }

func userChat(text string) workload.TokenChat {
	return workload.TokenChat{Messages: []workload.TokenMessage{{Role: "user", Content: text}}}
}

// banner states the lengths in tokens: the document exactly, the
// scaffolding (chat template, question) beside it.
func (e *exactDocs) banner(documentLength int) []workload.Field {
	lo, hi := slices.Min(e.questionTokens), slices.Max(e.questionTokens)
	scaffold := strconv.Itoa(lo)
	if hi != lo {
		scaffold += "-" + strconv.Itoa(hi)
	}
	return []workload.Field{
		{Label: "Tokenizer", Value: "the model's (lengths exact)"},
		{Label: "Warmup prompt", Value: fmt.Sprintf("%d tokens (document + %d of chat template)", e.warmTokens, e.warmTokens-documentLength)},
		{Label: "Question scaffolding", Value: scaffold + " tokens (chat template + question)"},
	}
}
