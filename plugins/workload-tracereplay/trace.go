package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/lmbench/lmbench/sdk/option"
)

// The trace formats.
const (
	formatAuto     = "auto"
	formatMooncake = "mooncake"
	formatJSONL    = "jsonl"
	formatCSV      = "csv"
)

// entry is one request of a trace.
type entry struct {
	line      int     // 1-based line in the file
	timestamp float64 // milliseconds
	input     int     // input_length
	output    int     // output_length
	hashIDs   []int64 // Mooncake only
}

// maxProblems bounds how many defects one error lists: past it, the count.
const maxProblems = 20

// problems collects a trace's defects, each already prefixed with
// file:line.
type problems struct {
	path string
	list []string
}

func (p *problems) add(line int, format string, args ...any) {
	p.list = append(p.list, fmt.Sprintf("%s:%d: ", p.path, line)+fmt.Sprintf(format, args...))
}

// err is the defects, each a --tr-trace error of its own, at most
// maxProblems of them.
func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	var errs []error
	for _, msg := range p.list[:min(len(p.list), maxProblems)] {
		errs = append(errs, option.Errorf("trace", "%s", msg))
	}
	if n := len(p.list) - maxProblems; n > 0 {
		errs = append(errs, option.Errorf("trace", "%s: ... and %d more problems", p.path, n))
	}
	return errors.Join(errs...)
}

// maxLineBytes bounds one JSON line (a Mooncake line of a 1M-token prompt
// holds about 2,000 hash ids, well under it).
const maxLineBytes = 64 << 20

// readTrace reads and lints the trace at path: every defect (a missing or
// invalid field, a timestamp before the previous one, hash ids that do not
// match input_length and blockSize) is reported together, each with
// file:line, as --tr-trace errors, and nothing is returned then. format "auto" is resolved and
// returned.
func readTrace(path, format string, blockSize int) ([]entry, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, format, option.Errorf("trace", "cannot read the trace: %v", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20) // detect peeks at the first line
	if format == formatAuto {
		format, err = detect(path, br)
		if err != nil {
			return nil, format, option.Errorf("trace", "cannot read %s: %v", path, err)
		}
	}
	p := &problems{path: path}
	var entries []entry
	if format == formatCSV {
		entries = readCSV(br, p)
	} else {
		entries = readJSONL(br, format == formatMooncake, p)
	}
	lint(entries, format == formatMooncake, blockSize, p)
	if err := p.err(); err != nil {
		return nil, format, err
	}
	if len(entries) == 0 {
		return nil, format, option.Errorf("trace", "%s: no requests in the trace", path)
	}
	return entries, format, nil
}

// detect picks the format: csv by the file's extension, mooncake when the
// first non-empty line (within 1 MiB) is a JSON object with hash_ids,
// jsonl otherwise.
func detect(path string, br *bufio.Reader) (string, error) {
	if strings.EqualFold(filepath.Ext(path), ".csv") {
		return formatCSV, nil
	}
	head, err := br.Peek(br.Size())
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return "", err
	}
	first, _, _ := bytes.Cut(bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n"), []byte("\n"))
	var probe map[string]json.RawMessage
	if json.Unmarshal(first, &probe) == nil {
		if _, ok := probe["hash_ids"]; ok {
			return formatMooncake, nil
		}
	}
	return formatJSONL, nil
}

// jsonLine is one JSON line; RawMessage keeps the types checkable.
type jsonLine struct {
	Timestamp    json.RawMessage `json:"timestamp"`
	InputLength  json.RawMessage `json:"input_length"`
	OutputLength json.RawMessage `json:"output_length"`
	HashIDs      json.RawMessage `json:"hash_ids"`
}

func readJSONL(r io.Reader, mooncake bool, p *problems) []entry {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), maxLineBytes)
	var out []entry
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if line == 1 {
			text = bytes.TrimPrefix(text, utf8BOM) // as some editors on Windows save
		}
		if len(text) == 0 {
			continue
		}
		var jl jsonLine
		if err := json.Unmarshal(text, &jl); err != nil {
			p.add(line, "not a JSON object: %v", err)
			continue
		}
		e := entry{line: line}
		ok := true
		ok = jsonNumber(p, line, "timestamp", jl.Timestamp, &e.timestamp) && ok
		ok = jsonInt(p, line, "input_length", jl.InputLength, &e.input) && ok
		ok = jsonInt(p, line, "output_length", jl.OutputLength, &e.output) && ok
		if mooncake {
			ok = jsonHashIDs(p, line, jl.HashIDs, &e.hashIDs) && ok
		}
		if ok {
			out = append(out, e)
		}
	}
	if err := sc.Err(); err != nil {
		p.add(line+1, "cannot read: %v", err)
	}
	return out
}

var utf8BOM = []byte("\xef\xbb\xbf")

func missing(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// jsonNumber reads a timestamp: a finite number >= 0 (milliseconds).
func jsonNumber(p *problems, line int, name string, raw json.RawMessage, dst *float64) bool {
	if missing(raw) {
		p.add(line, "missing %q", name)
		return false
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(v, 0) || v < 0 {
		p.add(line, "%s: must be a number of milliseconds >= 0, got %s", name, raw)
		return false
	}
	*dst = v
	return true
}

// jsonInt reads a length: an integer >= 1.
func jsonInt(p *problems, line int, name string, raw json.RawMessage, dst *int) bool {
	if missing(raw) {
		p.add(line, "missing %q", name)
		return false
	}
	v, err := strconv.ParseInt(string(raw), 10, 32)
	if err != nil || v < 1 {
		p.add(line, "%s: must be an integer >= 1, got %s", name, raw)
		return false
	}
	*dst = int(v)
	return true
}

func jsonHashIDs(p *problems, line int, raw json.RawMessage, dst *[]int64) bool {
	if missing(raw) {
		p.add(line, `missing "hash_ids" (the mooncake format needs one per block; --tr-format jsonl replays lengths alone)`)
		return false
	}
	var nums []json.Number
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&nums); err != nil {
		p.add(line, "hash_ids: must be a list of integers >= 0, got %s", clip(raw))
		return false
	}
	ids := make([]int64, len(nums))
	for i, n := range nums {
		v, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil || v < 0 {
			p.add(line, "hash_ids[%d]: must be an integer >= 0, got %s", i, n)
			return false
		}
		ids[i] = v
	}
	*dst = ids
	return true
}

func clip(raw []byte) string {
	if len(raw) > 60 {
		return string(raw[:60]) + "..."
	}
	return string(raw)
}

// csvColumns are the columns a CSV trace must name in its header.
var csvColumns = []string{"timestamp", "input_length", "output_length"}

func readCSV(r io.Reader, p *problems) []entry {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // a short row is reported by its line, below
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err != nil {
		p.add(1, "cannot read the CSV header: %v", err)
		return nil
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(strings.ToLower(h))] = i
	}
	for _, c := range csvColumns {
		if _, ok := col[c]; !ok {
			p.add(1, "the header %q lacks the column %q (expected %s)", strings.Join(header, ","), c, strings.Join(csvColumns, ","))
		}
	}
	if len(p.list) > 0 {
		return nil
	}
	var out []entry
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				line = pe.Line
			}
			p.add(line, "not a CSV row: %v", err)
			continue
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		e := entry{line: line}
		ok := true
		field := func(name string) (json.RawMessage, bool) {
			i := col[name]
			if i >= len(rec) || strings.TrimSpace(rec[i]) == "" {
				p.add(line, "missing %q", name)
				return nil, false
			}
			return json.RawMessage(strings.TrimSpace(rec[i])), true
		}
		if raw, has := field("timestamp"); has {
			ok = jsonNumber(p, line, "timestamp", raw, &e.timestamp) && ok
		} else {
			ok = false
		}
		if raw, has := field("input_length"); has {
			ok = jsonInt(p, line, "input_length", raw, &e.input) && ok
		} else {
			ok = false
		}
		if raw, has := field("output_length"); has {
			ok = jsonInt(p, line, "output_length", raw, &e.output) && ok
		} else {
			ok = false
		}
		if ok {
			out = append(out, e)
		}
	}
	return out
}

// lint checks what spans fields and lines: time order, and (Mooncake)
// one hash id per block of input_length.
func lint(entries []entry, mooncake bool, blockSize int, p *problems) {
	for i, e := range entries {
		if i > 0 && e.timestamp < entries[i-1].timestamp {
			prev := entries[i-1]
			p.add(e.line, "timestamp %s is before the previous request's %s (line %d): a trace must be in time order",
				num(e.timestamp), num(prev.timestamp), prev.line)
		}
		if mooncake {
			if want := blocks(e.input, blockSize); len(e.hashIDs) != want {
				p.add(e.line, "%d hash_ids for input_length %d, expected ceil(%d / %d) = %d (one per block of --tr-block-size %d tokens)",
					len(e.hashIDs), e.input, e.input, blockSize, want, blockSize)
			}
		}
	}
}

// blocks is ceil(n / size).
func blocks(n, size int) int { return (n + size - 1) / size }

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// sharedPrefixes returns, for each entry, how many of its leading hash ids
// an earlier entry already sent as full blocks, in the same order from the
// start: the prefix a prefix cache can hit. A hash id is a block in the
// context of the ones before it (Mooncake's ids are chained), so the walk
// follows a trie of the ids seen; a request's last block, when partial, is
// not a full block and is never cached.
func sharedPrefixes(entries []entry, blockSize int) []int {
	type edge struct {
		parent int
		id     int64
	}
	trie := map[edge]int{} // node ids from 1; 0 is the root
	out := make([]int, len(entries))
	for i, e := range entries {
		node, shared, matching := 0, 0, true
		full := e.input / blockSize
		for k, id := range e.hashIDs[:min(full, len(e.hashIDs))] {
			next, ok := trie[edge{node, id}]
			if !ok {
				next = len(trie) + 1
				trie[edge{node, id}] = next
				matching = false
			}
			if matching {
				shared = k + 1
			}
			node = next
		}
		out[i] = shared
	}
	return out
}

// window selects the entries to replay: from start seconds of trace time,
// for duration seconds (0: to the end), at most maxRequests (0: all).
func window(entries []entry, start, duration float64, maxRequests int) []entry {
	from := slices.IndexFunc(entries, func(e entry) bool { return e.timestamp >= start*1000 })
	if from < 0 {
		return nil
	}
	out := entries[from:]
	if duration > 0 {
		end := start*1000 + duration*1000
		if n := slices.IndexFunc(out, func(e entry) bool { return e.timestamp >= end }); n >= 0 {
			out = out[:n]
		}
	}
	if maxRequests > 0 && len(out) > maxRequests {
		out = out[:maxRequests]
	}
	return out
}
