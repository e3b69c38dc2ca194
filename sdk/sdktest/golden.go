package sdktest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// JSONL renders the transcript's requests, one JSON object per line: the
// form golden files pin, so any change to prompts or order shows in review.
func (t *Transcript) JSONL() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, s := range t.Requests {
		if err := enc.Encode(s); err != nil {
			panic(err) // Sent holds only strings, numbers and maps of strings
		}
	}
	return b.Bytes()
}

// UpdateHint says how to rewrite a golden file: sdktest declares no flag
// (a test package that declares its own -update would panic on a second),
// so the test declares it and passes it to Golden.
const UpdateHint = `run go test -update; the flag is the test's own: ` +
	`var update = flag.Bool("update", false, "rewrite golden files"), passed as Golden(t, path, got, *update)`

// Golden compares got with the golden file at path. With update (wire it
// to the test's own -update flag; see UpdateHint) it first rewrites the
// file.
func Golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (to create it, %s)", err, UpdateHint)
	}
	if bytes.Equal(want, got) {
		return
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			t.Fatalf("%s differs from the output at line %d (if the change is intended, %s):\nwant: %s\ngot:  %s",
				path, i+1, UpdateHint, clip(w), clip(g))
		}
	}
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
