//go:build linux

package plugin

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// fileIdentity is what names path's content without reading it: its
// absolute path, device, inode, size, and modification and change times
// in nanoseconds.
func fileIdentity(path string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%q:%d:%d:%d:%d.%d:%d.%d", abs, st.Dev, st.Ino, st.Size,
		st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec), true
}
