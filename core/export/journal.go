package export

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"google.golang.org/protobuf/encoding/protojson"

	exporterv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/exporter/v1"
)

// JournalName is the journal's file name inside the output directory.
const JournalName = "bench_journal.jsonl"

// JournalVersion is written in the journal's first line.
const JournalVersion = 1

// Journal appends one JSON line per event: a "run" header, a "request"
// line per finished request (both phases), and a "summary" line at the end.
// Each Append is written through to the OS before it returns, so a killed
// host loses only requests still in flight.
type Journal struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	path string
}

// CreateJournal creates (truncates) the journal at path and writes the header.
func CreateJournal(path string, meta *exporterv1.RunMetadata) (*Journal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	j := &Journal{f: f, w: bufio.NewWriterSize(f, 64<<10), path: path}
	run, err := protojson.Marshal(meta)
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := j.line(map[string]any{"kind": "run", "version": JournalVersion, "run": json.RawMessage(run)}); err != nil {
		f.Close()
		return nil, err
	}
	return j, j.Flush()
}

// Path returns the journal's path.
func (j *Journal) Path() string { return j.path }

func (j *Journal) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	j.w.Write(b)
	return j.w.WriteByte('\n')
}

// Append writes records (buffered); call Flush after a batch.
func (j *Journal) Append(recs ...*exporterv1.Record) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, r := range recs {
		b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(r)
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		j.w.WriteString(`{"kind":"request","record":`)
		j.w.Write(b)
		if _, err := j.w.WriteString("}\n"); err != nil {
			return fmt.Errorf("journal %s: %w", j.path, err)
		}
	}
	return nil
}

// Flush writes buffered lines to the OS.
func (j *Journal) Flush() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.w.Flush(); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	return nil
}

// Close writes the summary line (if any), flushes, syncs and closes.
func (j *Journal) Close(summary *exporterv1.Summary) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if summary != nil {
		b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(summary)
		if err == nil {
			j.w.WriteString(`{"kind":"summary","summary":`)
			j.w.Write(b)
			j.w.WriteString("}\n")
		}
	}
	err := j.w.Flush()
	if serr := j.f.Sync(); err == nil {
		err = serr
	}
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadJournal reads a journal back: its run metadata and every request
// record in order. A torn last line (the host was killed mid-write) is ignored.
func ReadJournal(path string) (*exporterv1.RunMetadata, []*exporterv1.Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var (
		meta *exporterv1.RunMetadata
		recs []*exporterv1.Record
		n    int
	)
	for sc.Scan() {
		n++
		var line struct {
			Kind    string          `json:"kind"`
			Version int             `json:"version"`
			Run     json.RawMessage `json:"run"`
			Record  json.RawMessage `json:"record"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			// Only a torn final line is expected; anything earlier is corruption.
			if !sc.Scan() {
				break
			}
			return nil, nil, fmt.Errorf("%s:%d: not a journal line: %v", path, n, err)
		}
		switch line.Kind {
		case "run":
			if line.Version != JournalVersion {
				return nil, nil, fmt.Errorf("%s: journal version %d, this lmbench reads version %d", path, line.Version, JournalVersion)
			}
			meta = &exporterv1.RunMetadata{}
			if err := protojson.Unmarshal(line.Run, meta); err != nil {
				return nil, nil, fmt.Errorf("%s:%d: %v", path, n, err)
			}
		case "request":
			r := &exporterv1.Record{}
			if err := protojson.Unmarshal(line.Record, r); err != nil {
				return nil, nil, fmt.Errorf("%s:%d: %v", path, n, err)
			}
			recs = append(recs, r)
		}
	}
	if meta == nil {
		return nil, nil, fmt.Errorf("%s: no run header: not an lmbench journal", path)
	}
	return meta, recs, sc.Err()
}
