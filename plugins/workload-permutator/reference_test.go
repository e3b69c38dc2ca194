package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lmbench/lmbench/sdk/pseudoword"
)

// reference is testdata/reference.json: values CPython computes with the
// original's algorithm (testdata/reference.py).
type reference struct {
	Vocab []struct {
		Size       int
		Seed       int64
		Head, Tail []string
		SHA256     string
	}
	System []struct {
		Length       int
		Seed         int64
		Head, SHA256 string
	}
	Contexts []struct {
		N, Length    int
		Seed         int64
		Head, SHA256 []string
	}
	Permutations []struct {
		N, K  int
		Seed  int64
		Perms [][]int
	}
}

func loadReference(t *testing.T) reference {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatalf("testdata/reference.json: %v", err)
	}
	if len(ref.Vocab) == 0 || len(ref.System) == 0 || len(ref.Contexts) == 0 || len(ref.Permutations) == 0 {
		t.Fatal("testdata/reference.json lacks a section")
	}
	return ref
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func head(s string, n int) string { return s[:min(n, len(s))] }

// TestMatchesPython checks the vocab pool, system prompt, contexts and
// permutations are bit-exact with CPython's for the same seeds.
func TestMatchesPython(t *testing.T) {
	t.Parallel()
	ref := loadReference(t)
	for _, c := range ref.Vocab {
		pool := pseudoword.Vocab(c.Size, c.Seed)
		if len(pool) != c.Size {
			t.Fatalf("vocab(%d, seed %d) has %d words", c.Size, c.Seed, len(pool))
		}
		got := struct{ Head, Tail []string }{pool[:min(5, len(pool))], pool[max(len(pool)-3, 0):]}
		if d := cmp.Diff(struct{ Head, Tail []string }{c.Head, c.Tail}, got); d != "" {
			t.Errorf("vocab(%d, seed %d) (-python +go):\n%s", c.Size, c.Seed, d)
		}
		if s := sum(strings.Join(pool, "\n")); s != c.SHA256 {
			t.Errorf("vocab(%d, seed %d): sha256 %s, python %s", c.Size, c.Seed, s, c.SHA256)
		}
	}
	for _, c := range ref.System {
		got := systemPrompt(c.Length, c.Seed)
		if head(got, 80) != c.Head || sum(got) != c.SHA256 {
			t.Errorf("system prompt(%d, seed %d) = %.80q…, python %.80q…", c.Length, c.Seed, got, c.Head)
		}
	}
	for _, c := range ref.Contexts {
		pool := pseudoword.Vocab(vocabSize, c.Seed)
		for i := range c.N {
			got := contextText(i, c.Length, pool, c.Seed)
			if head(got, 60) != c.Head[i] || sum(got) != c.SHA256[i] {
				t.Errorf("context %d (length %d, seed %d) = %.60q…, python %.60q…", i, c.Length, c.Seed, got, c.Head[i])
			}
		}
	}
	for _, c := range ref.Permutations {
		if d := cmp.Diff(c.Perms, permutations(c.N, c.K, c.Seed)); d != "" {
			t.Errorf("permutations(n=%d, k=%d, seed %d) (-python +go):\n%s", c.N, c.K, c.Seed, d)
		}
	}
}

// TestReferenceIsPythonOutput regenerates testdata/reference.json with
// python3, when it is installed, so the pinned values stay CPython's.
func TestReferenceIsPythonOutput(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	out, err := exec.Command(py, filepath.Join("testdata", "reference.py")).Output()
	if err != nil {
		t.Fatalf("python3 testdata/reference.py: %v", err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, want) {
		t.Error("testdata/reference.json differs from what testdata/reference.py prints; regenerate it")
	}
}
