package tokenize

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/dlclark/regexp2/v2"
	"github.com/rs/zerolog"
	"github.com/sugarme/tokenizer"
	"github.com/sugarme/tokenizer/normalizer"
	"github.com/sugarme/tokenizer/pretokenizer"
	"github.com/sugarme/tokenizer/pretrained"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// A local Hugging Face tokenizer.json (--tokenizer PATH) is read with
// sugarme/tokenizer, the only pure-Go reader of that format with BPE,
// WordPiece, Unigram, normalizers and added tokens (gomlx/go-huggingface
// reads SentencePiece models only; tiktoken-go/tokenizer knows OpenAI's
// built-in encodings only; daulet/tokenizers is cgo over the Rust crate).
// sugarme compiles Split patterns with Go's regexp, which rejects the
// look-ahead (\s+(?!\S)) of GPT-2's, Llama 3's, Qwen's and GPT-4's
// patterns, and its ByteLevel pre-tokenizer always splits with a pattern
// of its own lacking that branch. So the pre-tokenizer is built here
// from the library's exported parts: Split and ByteLevel match with
// dlclark/regexp2 (look-ahead, \p{..}, (?i:..)), everything else is the
// library's own. The chat template is chattemplate.go's.

// fileTokenizerPerMessage and fileTokenizerGenPrompt are what a chat adds
// besides its messages' text when no chat template is beside the file:
// per message the role header
// and end marker, plus the generation prompt (ChatML's
// "<|im_start|>role\n" … "<|im_end|>\n" is 5 tokens, "<|im_start|>assistant\n" 3).
const (
	fileTokenizerPerMessage = 5
	fileTokenizerGenPrompt  = 3
)

// fileTokenizer counts tokens with a local tokenizer.json: texts without
// special tokens; chats through the chat template of the
// tokenizer_config.json beside it, rendered then counted like a text (the
// template writes the special tokens), or, with no template, as their
// messages' texts plus a fixed overhead.
type fileTokenizer struct {
	path string
	chat *chatTemplate // nil: none beside the file
	// added matches the file's added tokens, longest first; nil when it
	// has none. A text is split at them here, each one token, because
	// the library's own extraction mis-splits a text holding several
	// (sugarme/tokenizer v0.3.0, AddedVocabulary.findMatches).
	added *regexp.Regexp
	// caveats are the file's settings the library does not honour, for
	// the run's warning: counts may then differ from the engine's.
	caveats []string

	mu    sync.Mutex // the library's encoder is not documented safe for concurrent use
	tk    *tokenizer.Tokenizer
	cache map[string]int
}

// tokenizerFilePath resolves --tokenizer PATH: a file, or a directory
// holding tokenizer.json.
func tokenizerFilePath(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("expected a Hugging Face tokenizer.json or a directory holding one: %w", err)
	}
	if st.IsDir() {
		f := filepath.Join(path, "tokenizer.json")
		if _, err := os.Stat(f); err != nil {
			return "", fmt.Errorf("a directory without tokenizer.json: %w", err)
		}
		return f, nil
	}
	return path, nil
}

// loadFileTokenizer reads a tokenizer.json (or a directory holding one).
func loadFileTokenizer(path string) (*fileTokenizer, error) {
	file, err := tokenizerFilePath(path)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: expected a Hugging Face tokenizer.json (a JSON object): %w", file, err)
	}
	if _, ok := doc["model"]; !ok {
		return nil, fmt.Errorf("%s: expected a Hugging Face tokenizer.json, found no \"model\" field", file)
	}
	added, strip, err := addedTokens(doc["added_tokens"])
	if err != nil {
		return nil, fmt.Errorf("%s: added_tokens: %w", file, err)
	}
	caveats := modelCaveats(doc["model"])
	if strip {
		caveats = append(caveats, "added tokens' lstrip/rstrip")
	}
	var preCfg map[string]any
	if p, ok := doc["pre_tokenizer"]; ok {
		if err := json.Unmarshal(p, &preCfg); err != nil {
			return nil, fmt.Errorf("%s: pre_tokenizer: %w", file, err)
		}
	}
	doc["pre_tokenizer"] = json.RawMessage("null") // built below
	stripped, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	tk, err := readTokenizer(stripped)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if preCfg != nil {
		pre, err := buildPreTokenizer(preCfg)
		if err != nil {
			return nil, fmt.Errorf("%s: pre_tokenizer: %w", file, err)
		}
		tk.WithPreTokenizer(pre)
	}
	chat, err := loadChatTemplate(file)
	if err != nil {
		return nil, err
	}
	return &fileTokenizer{path: path, chat: chat, added: added, caveats: caveats, tk: tk, cache: map[string]int{}}, nil
}

// addedTokens is a pattern of the added tokens' contents, longest first,
// so the longest one starting at a place wins, and whether any asks to
// strip the whitespace beside it (not done here).
func addedTokens(raw json.RawMessage) (*regexp.Regexp, bool, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false, nil
	}
	var list []struct {
		Content        string
		LStrip, RStrip bool
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, false, fmt.Errorf("expected a list of {content, …}: %w", err)
	}
	var alts []string
	strip := false
	for _, t := range list {
		if t.Content != "" {
			alts = append(alts, t.Content)
			strip = strip || t.LStrip || t.RStrip
		}
	}
	if len(alts) == 0 {
		return nil, false, nil
	}
	slices.SortStableFunc(alts, func(a, b string) int { return len(b) - len(a) })
	for i, a := range alts {
		alts[i] = regexp.QuoteMeta(a)
	}
	re, err := regexp.Compile(strings.Join(alts, "|"))
	return re, strip, err
}

// modelCaveats names the model's settings sugarme/tokenizer v0.3.0's BPE
// ignores: ignore_merges (Llama 3: a pre-token in the vocabulary is one
// token) and byte_fallback (SentencePiece-converted files).
func modelCaveats(raw json.RawMessage) []string {
	var m struct {
		IgnoreMerges bool `json:"ignore_merges"`
		ByteFallback bool `json:"byte_fallback"`
	}
	_ = json.Unmarshal(raw, &m) // its shape is the library's to check
	var out []string
	if m.IgnoreMerges {
		out = append(out, "model.ignore_merges")
	}
	if m.ByteFallback {
		out = append(out, "model.byte_fallback")
	}
	return out
}

// readTokenizer is the library's reader, its panics (type assertions on
// unexpected JSON) turned into errors.
func readTokenizer(b []byte) (tk *tokenizer.Tokenizer, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unsupported tokenizer.json: %v", r)
		}
	}()
	return pretrained.FromReader(bytes.NewReader(b))
}

// buildPreTokenizer builds a pre_tokenizer object: Sequence, Split and
// ByteLevel here (with regexp2), any other type by the library.
func buildPreTokenizer(cfg map[string]any) (_ tokenizer.PreTokenizer, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unsupported pre-tokenizer %v: %v", cfg["type"], r)
		}
	}()
	switch cfg["type"] {
	case "Sequence":
		list, _ := cfg["pretokenizers"].([]any)
		var pres []tokenizer.PreTokenizer
		for i, c := range list {
			m, ok := c.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("pretokenizers[%d]: expected an object", i)
			}
			p, err := buildPreTokenizer(m)
			if err != nil {
				return nil, fmt.Errorf("pretokenizers[%d]: %w", i, err)
			}
			pres = append(pres, p)
		}
		return pretokenizer.NewSequence(pres), nil
	case "Split":
		pat, _ := cfg["pattern"].(map[string]any)
		var expr string
		if s, ok := pat["Regex"].(string); ok {
			expr = s
		} else if s, ok := pat["String"].(string); ok {
			expr = regexp2.Escape(s)
		} else {
			return nil, fmt.Errorf("Split: expected pattern Regex or String, got %v", cfg["pattern"])
		}
		re, err := regexp2.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("Split: pattern %q: %w", expr, err)
		}
		b, err := splitBehavior(cfg["behavior"])
		if err != nil {
			return nil, err
		}
		invert, _ := cfg["invert"].(bool)
		return pretokenizer.NewSplit(regexPattern{re}, b, invert), nil
	case "ByteLevel":
		bl := &byteLevel{}
		bl.addPrefixSpace, _ = cfg["add_prefix_space"].(bool)
		useRegex, ok := cfg["use_regex"].(bool)
		if !ok || useRegex { // absent means true, as in the tokenizers crate
			bl.split = regexPattern{gpt2Split}
		}
		return bl, nil
	}
	return pretrained.CreatePreTokenizer(cfg)
}

func splitBehavior(v any) (normalizer.SplitDelimiterBehavior, error) {
	switch v {
	case "Removed":
		return normalizer.RemovedBehavior, nil
	case "Isolated":
		return normalizer.IsolatedBehavior, nil
	case "MergedWithNext":
		return normalizer.MergedWithNextBehavior, nil
	case "MergedWithPrevious":
		return normalizer.MergedWithPreviousBehavior, nil
	case "Contiguous":
		return normalizer.ContiguousBehavior, nil
	}
	return 0, fmt.Errorf("Split: unknown behavior %v", v)
}

// regexPattern is a normalizer.Pattern matched with regexp2: the matches
// and the gaps between them, covering the whole input, in byte offsets.
type regexPattern struct{ re *regexp2.Regexp }

func (p regexPattern) FindMatches(s string) []normalizer.OffsetsMatch {
	if s == "" {
		return []normalizer.OffsetsMatch{{Offsets: []int{0, 0}, Match: false}}
	}
	idx, err := p.re.FindAllStringIndex(s, -1)
	if err != nil || len(idx) == 0 { // err: a match timeout, never set here
		return []normalizer.OffsetsMatch{{Offsets: []int{0, len(s)}, Match: false}}
	}
	var out []normalizer.OffsetsMatch
	at := 0
	for _, m := range idx {
		if m[0] > at {
			out = append(out, normalizer.OffsetsMatch{Offsets: []int{at, m[0]}, Match: false})
		}
		if m[1] > m[0] {
			out = append(out, normalizer.OffsetsMatch{Offsets: []int{m[0], m[1]}, Match: true})
		}
		at = m[1]
	}
	if at < len(s) {
		out = append(out, normalizer.OffsetsMatch{Offsets: []int{at, len(s)}, Match: false})
	}
	return out
}

// gpt2Split is the ByteLevel pre-tokenizer's pattern in the tokenizers
// crate (GPT-2's).
var gpt2Split = regexp2.MustCompile(`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`)

// byteLevel is the ByteLevel pre-tokenizer: an optional leading space,
// an optional split by GPT-2's pattern, then every byte mapped to its
// printable stand-in (the library's table).
type byteLevel struct {
	addPrefixSpace bool
	split          normalizer.Pattern // nil: use_regex false
}

func (b *byteLevel) PreTokenize(pt *tokenizer.PreTokenizedString) (*tokenizer.PreTokenizedString, error) {
	pt = pt.Split(func(_ int, n *normalizer.NormalizedString) []tokenizer.SplitIdx {
		if b.addPrefixSpace && !strings.HasPrefix(n.GetNormalized(), " ") {
			n = n.Prepend(" ")
		}
		if b.split == nil {
			return []tokenizer.SplitIdx{{Normalized: n}}
		}
		var out []tokenizer.SplitIdx
		for _, s := range n.Split(b.split, normalizer.IsolatedBehavior) {
			s := s
			out = append(out, tokenizer.SplitIdx{Normalized: &s})
		}
		return out
	})
	return pt.Normalize(func(n *normalizer.NormalizedString) *normalizer.NormalizedString {
		var cm []normalizer.ChangeMap
		for _, r := range n.GetNormalized() {
			for i, c := range []byte(string(r)) {
				change := 0
				if i > 0 {
					change = 1
				}
				cm = append(cm, normalizer.ChangeMap{RuneVal: pretokenizer.BytesChar[c], Changes: change})
			}
		}
		return n.Transform(cm, 0)
	}), nil
}

// countText is one text's tokens, without special tokens added: an added
// token written in the text is one token, the text between them is
// encoded by the library.
func (f *fileTokenizer) countText(t string) (int, error) {
	if n, ok := f.cache[t]; ok {
		return n, nil
	}
	n, at := 0, 0
	var cuts [][]int
	if f.added != nil {
		cuts = f.added.FindAllStringIndex(t, -1)
	}
	for _, c := range append(cuts, []int{len(t), len(t)}) {
		if c[0] > at {
			k, err := f.encode(t[at:c[0]])
			if err != nil {
				return 0, err
			}
			n += k
		}
		if c[1] > c[0] {
			n++
		}
		at = c[1]
	}
	f.cache[t] = n
	return n, nil
}

// encode is the library's count of a text without added tokens, its
// panics (on input its model cannot encode) turned into errors.
func (f *fileTokenizer) encode(t string) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the tokenizer cannot encode the text: %v", r)
		}
	}()
	enc, err := f.tk.EncodeSingle(t, false)
	if err != nil {
		return 0, err
	}
	return len(enc.Ids), nil
}

// CountTokens answers q from the file; a chat is its rendered template's
// tokens or, with no template, its messages' texts plus
// fileTokenizerPerMessage per message and fileTokenizerGenPrompt.
func (f *fileTokenizer) CountTokens(ctx context.Context, q protocol.TokenQuery) (protocol.TokenCounts, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := protocol.TokenCounts{Texts: make([]int, len(q.Texts)), Chats: make([]int, len(q.Chats))}
	for i, t := range q.Texts {
		if err := ctx.Err(); err != nil {
			return protocol.TokenCounts{}, err
		}
		n, err := f.countText(t)
		if err != nil {
			return protocol.TokenCounts{}, fmt.Errorf("tokenizer %s: text %d: %w", f.path, i, err)
		}
		out.Texts[i] = n
	}
	for i, c := range q.Chats {
		if f.chat != nil {
			text, err := f.chat.render(c)
			if err != nil {
				return protocol.TokenCounts{}, fmt.Errorf("tokenizer %s: chat %d: %w", f.path, i, err)
			}
			if out.Chats[i], err = f.countText(text); err != nil {
				return protocol.TokenCounts{}, fmt.Errorf("tokenizer %s: chat %d: %w", f.path, i, err)
			}
			continue
		}
		total := fileTokenizerGenPrompt
		for j, m := range c.Messages {
			n, err := f.countText(m.Content)
			if err != nil {
				return protocol.TokenCounts{}, fmt.Errorf("tokenizer %s: chat %d message %d: %w", f.path, i, j, err)
			}
			total += n + fileTokenizerPerMessage
		}
		out.Chats[i] = total
	}
	return out, nil
}

// fileTokenizerName is what the summary records for a tokenizer file.
func (f *fileTokenizer) name() string {
	if f.chat == nil {
		return "file:" + f.path + " (no chat template)"
	}
	return "file:" + f.path
}

// fileTokenizerFor loads --tokenizer PATH for the run, warning when chats
// are counted without a template.
func fileTokenizerFor(path, origin string, log zerolog.Logger) (protocol.TokenCounter, string, error) {
	tok, err := loadFileTokenizer(path)
	if err != nil {
		return nil, "", fmt.Errorf("%s %s: %w", origin, path, err)
	}
	if tok.chat == nil {
		log.Warn().Msgf("%s %s: no chat_template in a tokenizer_config.json beside it; a chat counts as its messages' tokens plus %d per message and %d for the generation prompt",
			origin, path, fileTokenizerPerMessage, fileTokenizerGenPrompt)
	}
	if len(tok.caveats) > 0 {
		log.Warn().Msgf("%s %s: %s not honoured by the tokenizer reader; rare texts may count differently from the engine's tokenizer (the run's stated and measured prompt tokens show it)",
			origin, path, strings.Join(tok.caveats, ", "))
	}
	log.Info().Str("tokenizer", path).Bool("chat_template", tok.chat != nil).Msg("prompt lengths are in the tokenizer file's tokens")
	return tok, tok.name(), nil
}

// LoadFile reads a Hugging Face tokenizer.json (or a directory holding
// one) and the chat template beside it as --tokenizer PATH does.
func LoadFile(path string) (protocol.TokenCounter, error) {
	return loadFileTokenizer(path)
}
