package enginemetrics

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkParse is one scrape's parsing and folding of a vLLM exposition
// with two engines and LMCache's series (testdata/vllm.txt).
func BenchmarkParse(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("testdata", "vllm.txt"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(body)); err != nil {
			b.Fatal(err)
		}
	}
}
