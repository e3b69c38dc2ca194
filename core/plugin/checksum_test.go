//go:build linux

package plugin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Not parallel: it points the user's cache directory elsewhere.
func TestChecksumMemo(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	bin := filepath.Join(t.TempDir(), "lmbench-workload-x")
	writeFile(t, bin, "a binary")
	sum, other := []byte{1, 2, 3}, []byte{4, 5, 6}
	if checksumKnown(bin, sum) {
		t.Fatal("a binary never verified is known")
	}
	rememberChecksum(bin, sum)
	if !checksumKnown(bin, sum) {
		t.Fatal("a verified, unchanged binary is not known")
	}
	if checksumKnown(bin, other) {
		t.Error("known against another expected sum (a changed .sha256)")
	}
	writeFile(t, bin, "a binary, rewritten") // another size, later times
	if checksumKnown(bin, sum) {
		t.Error("known after the binary changed")
	}
	repl := bin + ".new" // same bytes, another file put in its place
	writeFile(t, repl, "a binary, rewritten")
	rememberChecksum(bin, sum)
	if err := os.Rename(repl, bin); err != nil {
		t.Fatal(err)
	}
	if checksumKnown(bin, sum) {
		t.Error("known after another file took the binary's place")
	}
	for i := range maxMemo + 10 { // the memo stays bounded
		p := filepath.Join(t.TempDir(), "p")
		writeFile(t, p, string(rune('a'+i%26)))
		rememberChecksum(p, sum)
	}
	b, err := os.ReadFile(checksumMemo())
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != maxMemo {
		t.Errorf("memo holds %d lines, want at most %d", n, maxMemo)
	}
}
