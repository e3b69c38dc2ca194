package engine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

const (
	readBufferSize = 8 << 10  // typical chunks are a few hundred bytes
	maxLineSize    = 64 << 20 // a longer SSE line fails the request
	maxPooledBuf   = 1 << 20  // larger scratch buffers are not kept in the pool
	drainLimit     = 64 << 10 // bytes read after [DONE] so the connection is reused
)

// chunk holds the fields of one streamed JSON chunk that we use; everything
// else is skipped by the decoder. Content fields are raw JSON so that their
// buffers are reused from chunk to chunk and unescaped straight into the
// response text.
type chunk struct {
	Choices []choice        `json:"choices"`
	Usage   usage           `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type choice struct {
	Delta struct {
		Content          json.RawMessage `json:"content"`
		ReasoningContent json.RawMessage `json:"reasoning_content"`
		Reasoning        json.RawMessage `json:"reasoning"`
	} `json:"delta"`
	Text json.RawMessage `json:"text"`
}

type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"` // -1 = absent (set by reset)
	} `json:"prompt_tokens_details"`
}

// reset prepares c for the next decode. encoding/json keeps fields that are
// absent from the input and decodes into existing slice elements without
// zeroing them, so both are cleared here; buffer capacity is kept.
func (c *chunk) reset() {
	all := c.Choices[:cap(c.Choices)]
	for i := range all {
		ch := &all[i]
		ch.Delta.Content = ch.Delta.Content[:0]
		ch.Delta.ReasoningContent = ch.Delta.ReasoningContent[:0]
		ch.Delta.Reasoning = ch.Delta.Reasoning[:0]
		ch.Text = ch.Text[:0]
	}
	c.Choices = c.Choices[:0]
	c.Usage = usage{}
	c.Usage.PromptTokensDetails.CachedTokens = -1
	c.Error = c.Error[:0]
}

// stream is the per-request parsing state. It is pooled: a Send borrows one
// and returns it, so steady-state requests allocate no read buffers.
type stream struct {
	br    *bufio.Reader
	long  []byte // assembles lines longer than the read buffer
	text  []byte // concatenated content
	chunk chunk

	completion bool
	now        func() time.Time

	chunks       int
	first, last  time.Time
	inputTokens  int
	outputTokens int
	cachedTokens int
	dataLines    int
	eventError   bool // the current event was announced as "event: error"
	done         bool // [DONE] seen
	finish       time.Time
}

var streamPool = sync.Pool{New: func() any {
	return &stream{br: bufio.NewReaderSize(nil, readBufferSize)}
}}

func getStream(r io.Reader, completion bool, now func() time.Time) *stream {
	st := streamPool.Get().(*stream)
	st.br.Reset(r)
	st.completion = completion
	st.now = now
	return st
}

func putStream(st *stream) {
	st.br.Reset(nil)
	if cap(st.long) > maxPooledBuf {
		st.long = nil
	}
	text := st.text[:0]
	if cap(text) > maxPooledBuf {
		text = nil
	}
	*st = stream{br: st.br, long: st.long[:0], text: text, chunk: st.chunk}
	streamPool.Put(st)
}

// errStreamFailed carries a failure message that is already in its final
// form.
type errStreamFailed string

func (e errStreamFailed) Error() string { return string(e) }

// run reads the event stream until [DONE] or a failure. Each data line is
// timestamped as soon as it has been read, before it is decoded.
func (st *stream) run() error {
	for {
		line, err := st.readLine()
		if len(line) == 0 {
			st.eventError = false // a blank line ends the event
		} else {
			if perr := st.line(line); perr != nil {
				return perr
			}
			if st.done {
				st.drain()
				return nil
			}
		}
		if err != nil {
			return st.readError(err)
		}
	}
}

// readLine returns the next line without its line ending. A line is only
// valid until the next call.
func (st *stream) readLine() ([]byte, error) {
	line, err := st.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		st.long = append(st.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(st.long) > maxLineSize {
				return nil, errStreamFailed(fmt.Sprintf("SSE line longer than %d bytes", maxLineSize))
			}
			line, err = st.br.ReadSlice('\n')
			st.long = append(st.long, line...)
		}
		line = st.long
	}
	line = bytes.TrimSuffix(line, lf)
	line = bytes.TrimSuffix(line, cr)
	return line, err
}

func (st *stream) readError(err error) error {
	var sf errStreamFailed
	if errors.As(err, &sf) {
		return sf
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errStreamFailed(fmt.Sprintf("stream ended before [DONE]: %v after %d data lines (%d with content)", err, st.dataLines, st.chunks))
	}
	return errStreamFailed(fmt.Sprintf("reading stream after %d data lines: %v", st.dataLines, err))
}

var (
	lf, cr      = []byte("\n"), []byte("\r")
	dataPrefix  = []byte("data:")
	eventPrefix = []byte("event:")
	doneMarker  = []byte("[DONE]")
)

// line handles one non-empty SSE line: data lines are decoded, "event:"
// lines are remembered for the next data line, comments and other fields
// (id:, retry:) are ignored.
func (st *stream) line(line []byte) error {
	if !bytes.HasPrefix(line, dataPrefix) {
		if bytes.HasPrefix(line, eventPrefix) {
			st.eventError = string(bytes.TrimSpace(line[len(eventPrefix):])) == "error"
		}
		return nil
	}
	t := st.now()
	payload := bytes.TrimSpace(line[len(dataPrefix):])
	if len(payload) == 0 {
		return nil
	}
	st.dataLines++
	if bytes.Equal(payload, doneMarker) {
		st.done = true
		st.finish = t
		return nil
	}
	if st.eventError {
		return errStreamFailed("stream error: " + errorMessage(payload))
	}
	n, err := st.decode(payload)
	if err != nil {
		return err
	}
	if n > 0 {
		st.chunks++
		if st.first.IsZero() {
			st.first = t
		}
		st.last = t
	}
	return nil
}

// decode decodes one JSON chunk, records its usage and appends its content
// to st.text. It returns the number of content bytes appended.
func (st *stream) decode(payload []byte) (int, error) {
	c := &st.chunk
	c.reset()
	if !c.decodeFast(payload) {
		c.reset()
		if err := json.Unmarshal(payload, c); err != nil {
			return 0, errStreamFailed(fmt.Sprintf("malformed chunk %q: %v", excerpt(payload, 200), err))
		}
	}
	if len(c.Error) > 0 && !isNull(c.Error) {
		return 0, errStreamFailed("stream error: " + errorMessage(c.Error))
	}
	if c.Usage.PromptTokens > 0 {
		st.inputTokens = c.Usage.PromptTokens
	}
	if c.Usage.CompletionTokens > 0 {
		st.outputTokens = c.Usage.CompletionTokens
	}
	if c.Usage.PromptTokensDetails.CachedTokens >= 0 {
		st.cachedTokens = c.Usage.PromptTokensDetails.CachedTokens
	}
	if len(c.Choices) == 0 {
		return 0, nil // the usage chunk
	}
	ch := &c.Choices[0]
	raw := ch.Text
	if !st.completion {
		raw = firstPresent(ch.Delta.Content, ch.Delta.ReasoningContent, ch.Delta.Reasoning)
	}
	before := len(st.text)
	var err error
	st.text, err = appendUnquoted(st.text, raw)
	if err != nil {
		return 0, errStreamFailed(fmt.Sprintf("malformed chunk %q: %v", excerpt(payload, 200), err))
	}
	return len(st.text) - before, nil
}

// firstPresent returns the first value that is present and not null: the
// original falls back from content to reasoning_content to reasoning only
// when content is null or missing (an empty string does not fall back).
func firstPresent(vals ...json.RawMessage) json.RawMessage {
	for _, v := range vals {
		if len(v) > 0 && !isNull(v) {
			return v
		}
	}
	return nil
}

func isNull(raw []byte) bool { return string(raw) == "null" }

// appendUnquoted appends the JSON string raw to dst; an absent or null raw
// appends nothing. Strings without escapes are copied directly.
func appendUnquoted(dst, raw []byte) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return dst, nil
	}
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return dst, fmt.Errorf("content is not a string: %s", excerpt(raw, 40))
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return append(dst, inner...), nil
	}
	out, ok := appendUnescaped(dst, inner)
	if !ok {
		return dst, fmt.Errorf("invalid string %s", excerpt(raw, 40))
	}
	return out, nil
}

// appendUnescaped decodes the inside of a JSON string exactly as
// encoding/json does: invalid UTF-8 bytes and unpaired surrogates become
// U+FFFD.
func appendUnescaped(dst, s []byte) ([]byte, bool) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return dst, false
			}
			switch s[i+1] {
			case '"', '\\', '/':
				dst = append(dst, s[i+1])
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r, ok := hex4(s[i+2:])
				if !ok {
					return dst, false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if len(s)-i >= 6 && s[i] == '\\' && s[i+1] == 'u' {
						if r2, ok := hex4(s[i+2:]); ok {
							if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
								dst = utf8.AppendRune(dst, d)
								i += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default:
				return dst, false
			}
			i += 2
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
		}
	}
	return dst, true
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// errorMessage extracts a readable message from an error payload: a JSON
// string, an object with "message" (OpenAI style, possibly wrapped in
// "error"), or else the raw text.
func errorMessage(raw []byte) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Message string          `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		if obj.Message != "" {
			return obj.Message
		}
		if len(obj.Error) > 0 && !isNull(obj.Error) {
			return errorMessage(obj.Error)
		}
	}
	return string(excerpt(raw, 512))
}

// drain reads what follows [DONE] (normally just the end of the chunked
// body) so the transport can put the connection back in its pool.
func (st *stream) drain() {
	_, _ = st.br.Discard(drainLimit)
}

// excerpt returns at most n bytes of b, marking a cut with "…".
func excerpt(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return append(b[:n:n], "…"...)
}
