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

// Golden compares got with the golden file at path. With update (wire it
// to the test's own -update flag) it first rewrites the file.
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
		t.Fatalf("%v (run the test with -update to create it)", err)
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
			t.Fatalf("%s differs from the output at line %d (rerun with -update if the change is intended):\nwant: %s\ngot:  %s",
				path, i+1, clip(w), clip(g))
		}
	}
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
