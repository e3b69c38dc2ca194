package hftok

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
)

// Tokenizer encodes texts as a tokenizer.json's tokenizer does, without
// the special tokens a post-processor adds. Safe for concurrent use.
type Tokenizer struct {
	added     added
	normalize normalizer   // nil: none
	pre       preTokenizer // nil: none
	model     *bpe

	mu    sync.Mutex
	cache map[string][]uint32 // words' ids
}

// Words up to cacheWordBytes long are cached, up to cacheWords of them
// (then the cache starts afresh), as the crate caches words.
const (
	cacheWordBytes = 256
	cacheWords     = 1 << 17
)

// fileJSON is the part of a tokenizer.json that decides the ids.
type fileJSON struct {
	AddedTokens  []addedToken    `json:"added_tokens"`
	Normalizer   map[string]any  `json:"normalizer"`
	PreTokenizer map[string]any  `json:"pre_tokenizer"`
	Model        json.RawMessage `json:"model"`
}

// Load reads a Hugging Face tokenizer.json.
func Load(path string) (*Tokenizer, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Parse reads the text of a Hugging Face tokenizer.json.
func Parse(raw []byte) (*Tokenizer, error) {
	var f fileJSON
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("expected a Hugging Face tokenizer.json (a JSON object with a model): %w", err)
	}
	if len(f.Model) == 0 || string(f.Model) == "null" {
		return nil, fmt.Errorf("expected a Hugging Face tokenizer.json, found no \"model\" field")
	}
	t := &Tokenizer{cache: map[string][]uint32{}}
	var err error
	if t.model, err = newBPE(f.Model); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if f.Normalizer != nil {
		if t.normalize, err = newNormalizer(f.Normalizer); err != nil {
			return nil, fmt.Errorf("normalizer: %w", err)
		}
	}
	if f.PreTokenizer != nil {
		if t.pre, err = newPreTokenizer(f.PreTokenizer); err != nil {
			return nil, fmt.Errorf("pre_tokenizer: %w", err)
		}
	}
	if err := t.setAdded(f.AddedTokens); err != nil {
		return nil, fmt.Errorf("added_tokens: %w", err)
	}
	return t, nil
}

// setAdded builds the two tries of the added tokens; a normalized one
// is looked for in its normalized form, as the crate does.
func (t *Tokenizer) setAdded(list []addedToken) error {
	t.added = added{tokens: list, raw: newTrie(), onNormal: newTrie()}
	for i, tok := range list {
		if !tok.Normalized || t.normalize == nil {
			if tok.Normalized {
				t.added.onNormal.add(tok.Content, i)
			} else {
				t.added.raw.add(tok.Content, i)
			}
			continue
		}
		n, err := t.normalize(tok.Content)
		if err != nil {
			return fmt.Errorf("[%d] %q: %w", i, tok.Content, err)
		}
		t.added.onNormal.add(n, i)
	}
	return nil
}

// Count is the number of tokens of text, without special tokens added.
func (t *Tokenizer) Count(text string) (int, error) {
	ids, err := t.Encode(text)
	return len(ids), err
}

// Encode is the ids of text, without special tokens added (as
// add_special_tokens=False): added tokens written in the text are one
// token each; the text between them is normalized, pre-tokenized and
// split by the model.
func (t *Tokenizer) Encode(text string) ([]uint32, error) {
	e := encoder{t: t}
	at := 0
	for _, m := range t.added.find(t.added.raw, text) {
		if err := e.normalized(piece{s: text[at:max(at, m.start)], atStart: at == 0}); err != nil {
			return nil, err
		}
		e.ids = append(e.ids, t.added.tokens[m.token].ID)
		at = m.end
	}
	if err := e.normalized(piece{s: text[min(at, len(text)):], atStart: at == 0}); err != nil {
		return nil, err
	}
	return e.ids, nil
}

// encoder is one Encode call's output and scratch space.
type encoder struct {
	t    *Tokenizer
	ids  []uint32
	word word
}

// normalized encodes a stretch of text between raw added tokens.
func (e *encoder) normalized(p piece) error {
	if p.s == "" {
		return nil
	}
	if e.t.normalize != nil {
		s, err := e.t.normalize(p.s)
		if err != nil {
			return err
		}
		p.s = s
	}
	at := 0
	for _, m := range e.t.added.find(e.t.added.onNormal, p.s) {
		if err := e.words(piece{s: p.s[at:max(at, m.start)], atStart: p.atStart && at == 0}); err != nil {
			return err
		}
		e.ids = append(e.ids, e.t.added.tokens[m.token].ID)
		at = m.end
	}
	return e.words(piece{s: p.s[min(at, len(p.s)):], atStart: p.atStart && at == 0})
}

// words pre-tokenizes a normalized stretch and encodes its words.
func (e *encoder) words(p piece) error {
	if p.s == "" {
		return nil
	}
	ps := []piece{p}
	if e.t.pre != nil {
		var err error
		if ps, err = e.t.pre(ps); err != nil {
			return err
		}
	}
	for _, w := range ps {
		e.ids = e.t.word(&e.word, w.s, e.ids)
	}
	return nil
}

// word appends the ids of one word, from the cache when it is there.
func (t *Tokenizer) word(w *word, s string, out []uint32) []uint32 {
	if len(s) > cacheWordBytes {
		return t.model.tokenize(w, s, out)
	}
	t.mu.Lock()
	ids, ok := t.cache[s]
	t.mu.Unlock()
	if ok {
		return append(out, ids...)
	}
	n := len(out)
	out = t.model.tokenize(w, s, out)
	ids = append([]uint32(nil), out[n:]...)
	t.mu.Lock()
	if len(t.cache) >= cacheWords {
		clear(t.cache)
	}
	t.cache[strings.Clone(s)] = ids
	t.mu.Unlock()
	return out
}

// modelJSON is a tokenizer.json "model" object of type BPE.
type modelJSON struct {
	Type         string            `json:"type"`
	Vocab        map[string]uint32 `json:"vocab"`
	Merges       json.RawMessage   `json:"merges"`
	UnkToken     *string           `json:"unk_token"`
	FuseUnk      bool              `json:"fuse_unk"`
	ByteFallback bool              `json:"byte_fallback"`
	IgnoreMerges bool              `json:"ignore_merges"`
	Prefix       *string           `json:"continuing_subword_prefix"`
	Suffix       *string           `json:"end_of_word_suffix"`
}

// newBPE reads the model; merges are "a b" strings or ["a", "b"] pairs.
func newBPE(raw json.RawMessage) (*bpe, error) {
	var mj modelJSON
	if err := json.Unmarshal(raw, &mj); err != nil {
		return nil, fmt.Errorf("expected an object with type, vocab and merges: %w", err)
	}
	if mj.Type != "BPE" && !(mj.Type == "" && mj.Merges != nil) {
		return nil, fmt.Errorf("type %q is not supported: only BPE models are read (the tokenizers of Llama, Qwen, Gemma, Mistral, DeepSeek, GPT-OSS)", mj.Type)
	}
	m := &bpe{vocab: mj.Vocab, fuseUnk: mj.FuseUnk, byteFallback: mj.ByteFallback, ignoreMerges: mj.IgnoreMerges}
	if m.vocab == nil {
		return nil, fmt.Errorf("expected a vocab object, got none")
	}
	if mj.Prefix != nil {
		m.prefix = *mj.Prefix
	}
	if mj.Suffix != nil {
		m.suffix = *mj.Suffix
	}
	if mj.UnkToken != nil {
		id, ok := m.vocab[*mj.UnkToken]
		if !ok {
			return nil, fmt.Errorf("unk_token %q is not in the vocab", *mj.UnkToken)
		}
		m.unk, m.hasUnk = id, true
	}
	for b := range m.byteIDs {
		m.byteIDs[b] = -1
		if id, ok := m.vocab[fmt.Sprintf("<0x%02X>", b)]; ok {
			m.byteIDs[b] = int32(id)
		}
	}
	pairs, err := readMerges(mj.Merges)
	if err != nil {
		return nil, err
	}
	m.merges = make(map[uint64]uint64, len(pairs))
	for rank, p := range pairs {
		a, okA := m.vocab[p[0]]
		b, okB := m.vocab[p[1]]
		if !okA || !okB {
			return nil, fmt.Errorf("merges[%d] %q: a part is not in the vocab", rank, p)
		}
		id, ok := m.vocab[p[0]+strings.TrimPrefix(p[1], m.prefix)]
		if !ok {
			return nil, fmt.Errorf("merges[%d] %q: the merged token is not in the vocab", rank, p)
		}
		m.merges[pairKey(a, b)] = uint64(rank)<<32 | uint64(id)
	}
	return m, nil
}

func readMerges(raw json.RawMessage) ([][2]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	b := bytes.TrimLeft(bytes.TrimLeft(raw, " \t\r\n"), "[")
	if b = bytes.TrimLeft(b, " \t\r\n"); len(b) > 0 && b[0] == '"' {
		var list []string
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("merges: expected a list of \"a b\" strings or of [a, b] pairs: %w", err)
		}
		out := make([][2]string, len(list))
		for i, s := range list {
			a, b, ok := strings.Cut(s, " ")
			if !ok {
				return nil, fmt.Errorf("merges[%d]: expected \"a b\", got %q", i, s)
			}
			out[i] = [2]string{a, b}
		}
		return out, nil
	}
	var out [][2]string
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("merges: expected a list of \"a b\" strings or of [a, b] pairs: %w", err)
	}
	return out, nil
}
