package main

// End to end: trace-replay replays a 200-request Mooncake-format trace
// against the built-in engine; the engine's cache hits are the blocks the
// trace shares.

import (
	"bytes"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

var updateTrace = flag.Bool("update-trace", false, "rewrite testdata/mooncake_200.jsonl from genMooncakeTrace")

const (
	traceFile      = "testdata/mooncake_200.jsonl"
	traceBlock     = 512 // Mooncake's tokens per hash id
	traceSpeedup   = 40
	reuseMarginMs  = 4000 // 100 ms of replay at the speed-up
	traceRequests  = 200
	traceMaxBlocks = 12
)

type traceLine struct {
	Timestamp    int64   `json:"timestamp"`
	InputLength  int     `json:"input_length"`
	OutputLength int     `json:"output_length"`
	HashIDs      []int64 `json:"hash_ids"`
}

// genMooncakeTrace draws the test trace: Mooncake's format with 512-token
// blocks; 60% of requests open with the full blocks of an earlier request's
// prefix (as a conversation or a shared system prompt does), then add
// blocks of their own, the last one partial or full and never reused. A
// prefix is taken only from a request at least reuseMarginMs earlier, so
// the request that stores it has been prefilled long before (100 ms at the
// replay's speed-up) and the expected hits do not depend on how two close
// requests race to the engine.
func genMooncakeTrace() []byte {
	r := rand.New(rand.NewPCG(14, 512))
	var lines []traceLine
	var next int64
	fresh := func() int64 { next++; return next - 1 }
	ts := int64(0)
	for i := range traceRequests {
		if i > 0 && r.IntN(5) > 0 { // a fifth arrive together with the one before
			ts += int64(r.IntN(400))
		}
		var ids []int64
		if r.IntN(10) < 6 {
			var eligible []traceLine
			for _, l := range lines {
				if l.Timestamp <= ts-reuseMarginMs && l.InputLength >= traceBlock {
					eligible = append(eligible, l)
				}
			}
			if len(eligible) > 0 {
				from := eligible[r.IntN(len(eligible))]
				full := from.InputLength / traceBlock
				ids = append(ids, from.HashIDs[:1+r.IntN(min(full, traceMaxBlocks-1))]...)
			}
		}
		own := 1 + r.IntN(min(4, traceMaxBlocks-len(ids)))
		for range own {
			ids = append(ids, fresh())
		}
		lines = append(lines, traceLine{
			Timestamp:    ts,
			InputLength:  (len(ids)-1)*traceBlock + 1 + r.IntN(traceBlock),
			OutputLength: 1 + r.IntN(32),
			HashIDs:      ids,
		})
	}
	var b bytes.Buffer
	for _, l := range lines {
		j, _ := json.Marshal(l)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// The checked-in trace is the generator's: go test -run TestTraceFixture -update-trace rewrites it.
func TestTraceFixture(t *testing.T) {
	t.Parallel()
	want := genMooncakeTrace()
	if *updateTrace {
		if err := os.WriteFile(traceFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(traceFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what genMooncakeTrace draws: run go test -run TestTraceFixture -update-trace", traceFile)
	}
}

// expectedShared is, per trace line, how many leading hash ids an earlier
// line sent as full blocks, in the same chain: what a prefix cache holds.
func expectedShared(lines []traceLine) []int {
	seen := map[string]bool{}
	out := make([]int, len(lines))
	for i, l := range lines {
		key, matching := "", true
		for k, id := range l.HashIDs[:l.InputLength/traceBlock] {
			key += strconv.FormatInt(id, 10) + "/"
			if matching && seen[key] {
				out[i] = k + 1
			} else {
				matching = false
			}
			seen[key] = true
		}
	}
	return out
}

func TestTraceReplayOnBuiltinEngine(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	raw, err := os.ReadFile(traceFile)
	if err != nil {
		t.Fatal(err)
	}
	var lines []traceLine
	for _, l := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var tl traceLine
		if err := json.Unmarshal(l, &tl); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, tl)
	}
	shared := expectedShared(lines)
	total := 0
	for _, s := range shared {
		total += s
	}
	if total < 100 {
		t.Fatalf("the trace shares only %d blocks: regenerate it with more reuse", total)
	}

	out := t.TempDir()
	// A CPU tier of 512 GB (4M tokens) holds the whole trace: no block is
	// evicted, so every block the trace shares must hit.
	r := lmbench(t, nil, "run", "--engine-url", "builtin", "--workload", "trace-replay",
		"--tr-trace", traceFile, "--tr-speedup", strconv.Itoa(traceSpeedup),
		"--sim-time-scale", "0", "--sim-cpu-gb", "512",
		"--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	c := readJournal(t, filepath.Join(out, "bench_journal.jsonl"))
	byID := map[string]int{}
	for i, rec := range c.Records {
		byID[rec.RequestID] = i
	}
	if len(c.Records) != len(lines) {
		t.Fatalf("journal has %d records, the trace %d lines", len(c.Records), len(lines))
	}
	first := c.Records[byID["line1"]]
	for i, l := range lines {
		id := "line" + strconv.Itoa(i+1)
		k, ok := byID[id]
		if !ok {
			t.Errorf("%s: not in the journal", id)
			continue
		}
		rec := c.Records[k]
		if !rec.Success {
			t.Errorf("%s failed: %s", id, rec.Error)
			continue
		}
		// The engine's own counts (usage): the trace's lengths.
		if rec.InputTokens != int64(l.InputLength) || rec.OutputTokens != int64(l.OutputLength) {
			t.Errorf("%s: engine saw %d prompt / %d output tokens, the trace says %d / %d",
				id, rec.InputTokens, rec.OutputTokens, l.InputLength, l.OutputLength)
		}
		// Cache hits: the shared 512-token blocks, 32 of the engine's
		// 16-token blocks each.
		if want := int64(shared[i] * traceBlock); rec.CachedTokens != want {
			t.Errorf("%s: engine cached %d tokens, the trace shares %d blocks (%d tokens)", id, rec.CachedTokens, shared[i], want)
		}
		if rec.Tags["shared_blocks"] != strconv.Itoa(shared[i]) {
			t.Errorf("%s: tag shared_blocks %q, want %d", id, rec.Tags["shared_blocks"], shared[i])
		}
		// Due at timestamp / speed-up from the first; sent then.
		due := time.Duration(l.Timestamp) * time.Millisecond / traceSpeedup
		if got := rec.Scheduled.Sub(first.Scheduled); got != due || !rec.ExplicitSchedule {
			t.Errorf("%s: scheduled at +%v (explicit %v), want +%v", id, got, rec.ExplicitSchedule, due)
		}
		if lag := rec.Submit.Sub(rec.Scheduled); lag < 0 || lag > time.Second {
			t.Errorf("%s: sent %v after it was due, want within [0, 1s]", id, lag)
		}
	}
	// The workload's own check says the same.
	msg := "Trace reuse: the engine reported " + strconv.Itoa(total*traceBlock) + " cached tokens over 200 successful requests; the trace shares " +
		strconv.Itoa(total*traceBlock) + " in full 512-token blocks (measured/expected 100.0%)"
	if !hasLog(r.stderr, "info", "trace-replay", msg) {
		t.Errorf("no log %q", msg)
	}
	if t.Failed() {
		t.Logf("stderr:\n%s", r.stderr)
	}
}
