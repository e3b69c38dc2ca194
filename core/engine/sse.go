package engine

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
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
	headLimit      = 4 << 10  // bytes kept of what precedes the first data line
	maxToolCalls   = 1024     // distinct tool-call indexes in one answer; more fails it
)

// chunk holds the fields of one streamed JSON chunk that we use; everything
// else is skipped by the decoder. Content fields are raw JSON so that their
// buffers are reused from chunk to chunk and unescaped straight into the
// response text; so are the strings the engine describes its answer with.
type chunk struct {
	ID      json.RawMessage `json:"id"`
	Model   json.RawMessage `json:"model"`
	Choices []choice        `json:"choices"`
	Usage   usage           `json:"usage"`
	// Timings is llama.cpp server's per-request timing, in its final
	// chunk; cache_n is the prompt tokens its slot took from the cache.
	Timings struct {
		CacheN tokenCount `json:"cache_n"` // -1 = absent (set by reset)
	} `json:"timings"`
	Error json.RawMessage `json:"error"`
}

type choice struct {
	Delta struct {
		Content          json.RawMessage `json:"content"`
		ReasoningContent json.RawMessage `json:"reasoning_content"`
		Reasoning        json.RawMessage `json:"reasoning"`
		ToolCalls        []toolCallDelta `json:"tool_calls"`
	} `json:"delta"`
	Text         json.RawMessage `json:"text"`
	FinishReason json.RawMessage `json:"finish_reason"`
	Logprobs     json.RawMessage `json:"logprobs"` // kept when Request.TopLogprobs asks
}

// toolCallDelta is one entry of delta.tool_calls: a piece of the call at
// Index. Index is raw so that an absent or null index can be told from 0.
type toolCallDelta struct {
	Index    json.RawMessage `json:"index"`
	ID       json.RawMessage `json:"id"`
	Function struct {
		Name      json.RawMessage `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type usage struct {
	PromptTokens        tokenCount `json:"prompt_tokens"`
	CompletionTokens    tokenCount `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens tokenCount `json:"cached_tokens"` // -1 = absent (set by reset)
	} `json:"prompt_tokens_details"`
}

// tokenCount is a count in usage. Engines write integers, but some write
// the same count as a float (3.0); any number whose value is a whole
// number is accepted, anything else fails the chunk. Null leaves the count
// as it was, as encoding/json does for an int.
type tokenCount int

func (n *tokenCount) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	v, ok := wholeNumber(b)
	if !ok {
		return fmt.Errorf("usage token count %s is not a whole number", excerpt(b, 40))
	}
	*n = tokenCount(v)
	return nil
}

// wholeNumber reads a JSON number whose value is a whole number that fits
// an int: 42, -1, 3.0, 1e3. Integers, with or without a zero fraction, are
// read exactly and without allocating; other forms (exponents) through
// float64. It reports false for anything else. Both decoders use it, so
// they agree on every count.
func wholeNumber(num []byte) (int, bool) {
	digits := num
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	i := 0
	for i < len(digits) && digits[i] >= '0' && digits[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, false // not a number
	}
	rest := digits[i:]
	if len(rest) > 1 && rest[0] == '.' && len(bytes.TrimLeft(rest[1:], "0")) == 0 {
		rest = nil // 3.0, 3.00: the integer itself
	}
	if len(rest) == 0 {
		if i > 18 { // may not fit: let strconv decide
			v, err := strconv.ParseInt(string(num[:len(num)-len(digits)+i]), 10, strconv.IntSize)
			if err != nil {
				return 0, false
			}
			return int(v), true
		}
		var v int64
		for _, c := range digits[:i] {
			v = v*10 + int64(c-'0')
		}
		if num[0] == '-' {
			v = -v
		}
		if v < math.MinInt || v > math.MaxInt {
			return 0, false
		}
		return int(v), true
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt || f >= -math.MinInt {
		return 0, false
	}
	return int(f), true
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
		tcs := ch.Delta.ToolCalls[:cap(ch.Delta.ToolCalls)]
		for j := range tcs {
			d := &tcs[j]
			d.Index, d.ID = d.Index[:0], d.ID[:0]
			d.Function.Name, d.Function.Arguments = d.Function.Name[:0], d.Function.Arguments[:0]
		}
		ch.Delta.ToolCalls = tcs[:0]
		ch.Text = ch.Text[:0]
		ch.FinishReason = ch.FinishReason[:0]
		ch.Logprobs = ch.Logprobs[:0]
	}
	c.ID, c.Model = c.ID[:0], c.Model[:0]
	c.Choices = c.Choices[:0]
	c.Usage = usage{}
	c.Usage.PromptTokensDetails.CachedTokens = -1
	c.Timings.CacheN = -1
	c.Error = c.Error[:0]
}

// stream is the per-request parsing state. It is pooled: a Send borrows one
// and returns it, so steady-state requests allocate no read buffers.
type stream struct {
	src source // the body, as br reads it
	br  *bufio.Reader
	// head keeps the start of the lines before the first data line: a
	// body that is not an event stream (a JSON error) is reported with it.
	head  []byte
	watch *watch // the request's limits; nil outside Send
	long  []byte // assembles lines longer than the read buffer
	text  []byte // concatenated content
	chunk chunk
	// calls accumulates the streamed tool calls, in the order their
	// indexes first appeared; scratch holds one delta's unquoted strings.
	calls   []toolCallAcc
	scratch []byte

	completion bool
	now        func() time.Time
	submit     time.Time // what times are offsets from
	maxTimes   int       // MaxChunkTimes; lowered by tests and benchmarks

	chunks       int // chunks with output: content, reasoning or tool-call text
	first, last  time.Time
	inputTokens  int
	outputTokens int
	cachedTokens int
	// logprobsK is how many tokens' log-probabilities to keep (0: none);
	// logprobs are those kept so far.
	logprobsK  int
	logprobs   []TokenLogprob
	dataLines  int
	eventError bool // the current event was announced as "event: error"
	done       bool // [DONE] seen
	finish     time.Time

	// times are the arrival offsets of the first maxTimes chunks with
	// output; the buffer is pooled and copied into the Result.
	times []time.Duration
	// What the engine said about its answer (see Result), in reused
	// buffers; lastModel is the previous Result's ResponseModel, kept by
	// the pool so that the same model needs no new string.
	responseID, responseModel, finishReason []byte
	lastModel                               string
}

// source is a body that remembers whether it was read to its end: a
// response read to EOF gives its connection back to the pool.
type source struct {
	r   io.Reader
	eof bool
}

func (s *source) Read(p []byte) (int, error) {
	if s.r == nil {
		return 0, io.EOF
	}
	n, err := s.r.Read(p)
	if err == io.EOF {
		s.eof = true
	}
	return n, err
}

var streamPool = sync.Pool{New: func() any {
	return &stream{br: bufio.NewReaderSize(nil, readBufferSize)}
}}

func getStream(r io.Reader, completion bool, now func() time.Time) *stream {
	st := streamPool.Get().(*stream)
	st.src = source{r: r}
	st.br.Reset(&st.src)
	st.completion = completion
	st.now = now
	st.maxTimes = MaxChunkTimes
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
	scratch := st.scratch[:0]
	if cap(scratch) > maxPooledBuf {
		scratch = nil
	}
	*st = stream{br: st.br, head: st.head[:0], long: st.long[:0], text: text, chunk: st.chunk, calls: poolableCalls(st.calls), scratch: scratch,
		times:      st.times[:0], // at most MaxChunkTimes: 128 KiB
		responseID: st.responseID[:0], responseModel: st.responseModel[:0], finishReason: st.finishReason[:0], lastModel: st.lastModel}
	streamPool.Put(st)
}

// poolableCalls empties calls for reuse, keeping the buffers of a few
// ordinary calls.
func poolableCalls(calls []toolCallAcc) []toolCallAcc {
	all := calls[:cap(calls)]
	if len(all) > 64 {
		return nil
	}
	for i := range all {
		if c := &all[i]; cap(c.id)+cap(c.name)+cap(c.args) > maxPooledBuf {
			*c = toolCallAcc{}
		}
	}
	return all[:0]
}

// errStreamFailed carries a failure message that is already in its final
// form.
type errStreamFailed string

func (e errStreamFailed) Error() string { return string(e) }

// run reads the event stream until [DONE] or a failure. Each data line is
// timestamped as soon as it has been read, before it is decoded. It
// returns at [DONE], without reading on: see drain.
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
		if st.dataLines == 0 && len(st.head) < headLimit {
			st.head = append(append(st.head, line[:min(len(line), headLimit-len(st.head))]...), '\n')
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
	output, err := st.decode(payload)
	if err != nil {
		return err
	}
	if st.watch != nil {
		st.watch.data(output)
	}
	if output {
		st.chunks++
		if st.first.IsZero() {
			st.first = t
		}
		st.last = t
		if len(st.times) < st.maxTimes {
			st.times = append(st.times, t.Sub(st.submit))
		}
	}
	return nil
}

// decode decodes one JSON chunk, records its usage and what it says about
// the answer (id, model, finish reason), appends its content to st.text
// and merges its tool-call deltas into st.calls. It reports whether the
// chunk carried output: content (or reasoning) or tool-call text.
func (st *stream) decode(payload []byte) (bool, error) {
	c := &st.chunk
	c.reset()
	if !c.decodeFast(payload) {
		c.reset()
		if err := json.Unmarshal(payload, c); err != nil {
			return false, malformed(payload, err)
		}
	}
	if len(c.Error) > 0 && !isNull(c.Error) {
		return false, errStreamFailed("stream error: " + errorMessage(c.Error))
	}
	if c.Usage.PromptTokens > 0 {
		st.inputTokens = int(c.Usage.PromptTokens)
	}
	if c.Usage.CompletionTokens > 0 {
		st.outputTokens = int(c.Usage.CompletionTokens)
	}
	switch {
	case c.Usage.PromptTokensDetails.CachedTokens >= 0:
		st.cachedTokens = int(c.Usage.PromptTokensDetails.CachedTokens)
	case c.Timings.CacheN >= 0: // llama.cpp's, when usage does not say
		st.cachedTokens = int(c.Timings.CacheN)
	}
	// Every chunk repeats the id and the model: the first one is kept.
	if len(st.responseID) == 0 {
		st.responseID = setString(st.responseID, c.ID)
	}
	if len(st.responseModel) == 0 {
		st.responseModel = setString(st.responseModel, c.Model)
	}
	if len(c.Choices) == 0 {
		return false, nil // the usage chunk
	}
	ch := &c.Choices[0]
	st.finishReason = setString(st.finishReason, ch.FinishReason)
	var err error
	if len(st.logprobs) < st.logprobsK && len(ch.Logprobs) > 0 && !isNull(ch.Logprobs) {
		if st.logprobs, err = appendLogprobs(st.logprobs, ch.Logprobs, st.completion, st.logprobsK); err != nil {
			return false, malformed(payload, err)
		}
	}
	raw := ch.Text
	if !st.completion {
		raw = firstPresent(ch.Delta.Content, ch.Delta.ReasoningContent, ch.Delta.Reasoning)
	}
	before := len(st.text)
	st.text, err = appendUnquoted(st.text, raw)
	if err != nil {
		return false, malformed(payload, fmt.Errorf("content %w", err))
	}
	output := len(st.text) > before
	if !st.completion && len(ch.Delta.ToolCalls) > 0 {
		calls, err := st.addToolCalls(ch.Delta.ToolCalls)
		if err != nil {
			return false, malformed(payload, err)
		}
		output = output || calls
	}
	return output, nil
}

func malformed(payload []byte, err error) error {
	return errStreamFailed(fmt.Sprintf("malformed chunk %q: %v", excerpt(payload, 200), err))
}

// toolCallAcc is one tool call assembled from its deltas.
type toolCallAcc struct {
	index          int
	id, name, args []byte
}

// addToolCalls merges one chunk's tool-call deltas into st.calls, by
// index: id and name come from the first delta that has them, arguments
// are concatenated. A delta without an index is the call at its position
// in the array (as when a whole call comes in one chunk). It reports
// whether any delta carried text; a delta that carries none (only an index
// and a type, say) is not output and creates no call.
func (st *stream) addToolCalls(deltas []toolCallDelta) (bool, error) {
	output := false
	for i := range deltas {
		d := &deltas[i]
		index, err := toolCallIndex(d.Index, i)
		if err != nil {
			return false, fmt.Errorf("tool_calls[%d].index %w", i, err)
		}
		b := st.scratch[:0]
		if b, err = appendUnquoted(b, d.ID); err != nil {
			return false, fmt.Errorf("tool_calls[%d].id %w", i, err)
		}
		idEnd := len(b)
		if b, err = appendUnquoted(b, d.Function.Name); err != nil {
			return false, fmt.Errorf("tool_calls[%d].function.name %w", i, err)
		}
		nameEnd := len(b)
		if b, err = appendUnquoted(b, d.Function.Arguments); err != nil {
			return false, fmt.Errorf("tool_calls[%d].function.arguments %w", i, err)
		}
		st.scratch = b
		if len(b) == 0 {
			continue
		}
		acc := st.toolCall(index)
		if acc == nil {
			return false, fmt.Errorf("more than %d tool calls", maxToolCalls)
		}
		if len(acc.id) == 0 {
			acc.id = append(acc.id, b[:idEnd]...)
		}
		if len(acc.name) == 0 {
			acc.name = append(acc.name, b[idEnd:nameEnd]...)
		}
		acc.args = append(acc.args, b[nameEnd:]...)
		output = true
	}
	return output, nil
}

// toolCallIndex reads a delta's index; absent or null, it is pos.
func toolCallIndex(raw json.RawMessage, pos int) (int, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return pos, nil
	}
	if len(raw) > 9 {
		return 0, fmt.Errorf("is not an integer from 0 to 999999999: %s", excerpt(raw, 40))
	}
	n := 0
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("is not an integer from 0 to 999999999: %s", excerpt(raw, 40))
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

// toolCall returns the call with index, adding it if it is new, or nil
// when there are already maxToolCalls. Deltas nearly always continue the
// latest call, so the search starts from the end.
func (st *stream) toolCall(index int) *toolCallAcc {
	for i := len(st.calls) - 1; i >= 0; i-- {
		if st.calls[i].index == index {
			return &st.calls[i]
		}
	}
	n := len(st.calls)
	if n >= maxToolCalls {
		return nil
	}
	if n < cap(st.calls) {
		st.calls = st.calls[:n+1] // reuse the pooled buffers
	} else {
		st.calls = append(st.calls, toolCallAcc{})
	}
	acc := &st.calls[n]
	acc.index, acc.id, acc.name, acc.args = index, acc.id[:0], acc.name[:0], acc.args[:0]
	return acc
}

// toolCalls returns the assembled calls in index order, nil if none.
func (st *stream) toolCalls() []ToolCall {
	if len(st.calls) == 0 {
		return nil
	}
	slices.SortStableFunc(st.calls, func(a, b toolCallAcc) int { return cmp.Compare(a.index, b.index) })
	out := make([]ToolCall, len(st.calls))
	for i, c := range st.calls {
		out[i] = ToolCall{ID: string(c.id), Name: string(c.name), Arguments: string(c.args)}
	}
	return out
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

// setString returns dst replaced by the JSON string raw when raw is a
// non-empty string, else dst unchanged: what the engine says about its
// answer is kept when a later chunk says nothing (null, ""), and a value
// of another type is ignored rather than failing the request.
func setString(dst []byte, raw json.RawMessage) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) <= len(`""`) || raw[0] != '"' {
		return dst
	}
	out, err := appendUnquoted(dst[:0], raw)
	if err != nil { // not reached: both decoders hand over valid strings only
		return dst[:0]
	}
	return out
}

// appendUnquoted appends the JSON string raw to dst; an absent or null raw
// appends nothing. Strings without escapes are copied directly. Errors
// read after the field's name: "content is not a string: 42".
func appendUnquoted(dst, raw []byte) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return dst, nil
	}
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return dst, fmt.Errorf("is not a string: %s", excerpt(raw, 40))
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return append(dst, inner...), nil
	}
	out, ok := appendUnescaped(dst, inner)
	if !ok {
		return dst, fmt.Errorf("is an invalid string: %s", excerpt(raw, 40))
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
// body) so the transport can put the connection back in its pool. Unless
// the body has ended already, the caller must bound the wait (Send
// cancels the request after doneGrace).
func (st *stream) drain() {
	if st.src.eof {
		return
	}
	_, _ = st.br.Discard(drainLimit)
}

// excerpt returns at most n bytes of b, marking a cut with "…".
func excerpt(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return append(b[:n:n], "…"...)
}
