package plugin

import (
	"bufio"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
)

// Verifying a plugin against its .sha256 reads and hashes the whole
// binary (about 14 MB) on every start: half the host's CPU of a short
// run. A binary verified once is remembered by what identifies its
// content without reading it (fileIdentity: device, inode, size,
// modification and change time; the kernel sets the change time on every
// write and no user can set it back), so a later start of the same file
// with the same expected sum skips the hash. Any change to the binary or
// to its .sha256 means a full check again.

// checksumMemo is the file of remembered verifications (one
// "identity sum" a line), in the user's cache directory.
func checksumMemo() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "lmbench", "verified-plugins")
}

// maxMemo bounds the memo's lines: the newest are kept.
const maxMemo = 256

// checksumKnown reports whether path, as it is now, was verified against
// want before.
func checksumKnown(path string, want []byte) bool {
	id, ok := fileIdentity(path)
	memo := checksumMemo()
	if !ok || memo == "" {
		return false
	}
	f, err := os.Open(memo)
	if err != nil {
		return false
	}
	defer f.Close()
	line := id + " " + hex.EncodeToString(want)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sc.Text() == line {
			return true
		}
	}
	return false
}

// rememberChecksum records that path, as it is now, matched want. It is
// best effort: a memo that cannot be written only means hashing again.
func rememberChecksum(path string, want []byte) {
	id, ok := fileIdentity(path)
	memo := checksumMemo()
	if !ok || memo == "" {
		return
	}
	var keep []string
	if b, err := os.ReadFile(memo); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l != "" && !strings.HasPrefix(l, id+" ") {
				keep = append(keep, l)
			}
		}
	}
	keep = append(keep, id+" "+hex.EncodeToString(want))
	keep = keep[max(0, len(keep)-maxMemo):]
	if err := os.MkdirAll(filepath.Dir(memo), 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(memo), ".verified-plugins-*")
	if err != nil {
		return
	}
	_, err = tmp.WriteString(strings.Join(keep, "\n") + "\n")
	if cerr := tmp.Close(); err != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	if os.Rename(tmp.Name(), memo) != nil { // atomic: concurrent hosts never read half a memo
		os.Remove(tmp.Name())
	}
}
