package tokenize

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/hftok"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// A local Hugging Face tokenizer.json (--tokenizer PATH) is read by
// core/hftok, which encodes as the tokenizers crate does (BPE with
// ordered merges, ignore_merges, byte_fallback, the normalizers and
// pre-tokenizers of the common families, added tokens); the chat
// template is chattemplate.go's.

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
// special tokens; chats through the chat template beside it
// (chat_template.jinja, or the tokenizer_config.json's chat_template),
// rendered then counted like a text (the template writes the special
// tokens), or, with no template, as their messages' texts plus a fixed
// overhead.
type fileTokenizer struct {
	path string
	chat *chatTemplate // nil: none beside the file
	tk   *hftok.Tokenizer

	mu    sync.Mutex
	cache map[string]int // texts' counts
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
	tk, err := readTokenizerFile(file)
	if err != nil {
		return nil, err
	}
	chat, err := loadChatTemplate(file)
	if err != nil {
		return nil, err
	}
	return &fileTokenizer{path: path, chat: chat, tk: tk, cache: map[string]int{}}, nil
}

// readFiles keeps the tokenizer files read, so that a run's Check and
// Resolve read a file (a second or more for Gemma's) once; an entry
// holds while the file's size and modification time do.
var readFiles struct {
	sync.Mutex
	m map[string]readFile
}

type readFile struct {
	size int64
	mod  time.Time
	tk   *hftok.Tokenizer
}

func readTokenizerFile(file string) (*hftok.Tokenizer, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	key, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	readFiles.Lock()
	defer readFiles.Unlock()
	if r, ok := readFiles.m[key]; ok && r.size == st.Size() && r.mod.Equal(st.ModTime()) {
		return r.tk, nil
	}
	tk, err := hftok.Load(file)
	if err != nil {
		return nil, err
	}
	if readFiles.m == nil {
		readFiles.m = map[string]readFile{}
	}
	readFiles.m[key] = readFile{size: st.Size(), mod: st.ModTime(), tk: tk}
	return tk, nil
}

// countText is one text's tokens, without special tokens added; an
// added token written in the text is one token, as the engine parses it.
func (f *fileTokenizer) countText(t string) (int, error) {
	if n, ok := f.cache[t]; ok {
		return n, nil
	}
	n, err := f.tk.Count(t)
	if err != nil {
		return 0, err
	}
	f.cache[t] = n
	return n, nil
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
		n, err := f.countUntemplated(c)
		if err != nil {
			return protocol.TokenCounts{}, fmt.Errorf("tokenizer %s: chat %d %w", f.path, i, err)
		}
		out.Chats[i] = n
	}
	return out, nil
}

// countUntemplated counts a chat with no template: its messages' texts
// plus fileTokenizerPerMessage each and fileTokenizerGenPrompt; a tool
// call as its name and arguments, the tools as one more message of their
// names, descriptions and parameters.
func (f *fileTokenizer) countUntemplated(c protocol.Chat) (int, error) {
	total := fileTokenizerGenPrompt
	for j, m := range c.Messages {
		texts := []string{m.Content}
		for _, tc := range m.ToolCalls {
			texts = append(texts, tc.Name, tc.Arguments)
		}
		for _, t := range texts {
			n, err := f.countText(t)
			if err != nil {
				return 0, fmt.Errorf("message %d: %w", j, err)
			}
			total += n
		}
		total += fileTokenizerPerMessage
	}
	if len(c.Tools) > 0 {
		total += fileTokenizerPerMessage
	}
	for j, t := range c.Tools {
		for _, s := range [3]string{t.Name, t.Description, t.Parameters} {
			n, err := f.countText(s)
			if err != nil {
				return 0, fmt.Errorf("tool %d: %w", j, err)
			}
			total += n
		}
	}
	return total, nil
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
		log.Warn().Msgf("%s %s: no chat_template.jinja beside it and no chat_template in a tokenizer_config.json beside it; a chat counts as its messages' tokens plus %d per message and %d for the generation prompt",
			origin, path, fileTokenizerPerMessage, fileTokenizerGenPrompt)
	}
	log.Info().Str("tokenizer", path).Bool("chat_template", tok.chat != nil).Msg("prompt lengths are in the tokenizer file's tokens")
	return tok, tok.name(), nil
}

// LoadFile reads a Hugging Face tokenizer.json (or a directory holding
// one) and the chat template beside it as --tokenizer PATH does.
func LoadFile(path string) (protocol.TokenCounter, error) {
	return loadFileTokenizer(path)
}
