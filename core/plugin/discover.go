package plugin

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// Candidate is a plugin binary found on disk.
type Candidate struct {
	Kind     string // "workload" or "exporter"
	Name     string // from the file name: lmbench-<kind>-<name>
	Path     string
	Shadowed []string // later binaries of the same name, not used
	// Refused says why the binary is not run ("" when it is fine): it
	// sits in a directory, or is a file, that other users can write, so
	// anyone could put code there that lmbench would run.
	Refused string
}

// SearchDirs returns where plugins are looked for, first hit wins: the
// directories of LMBENCH_PLUGIN_PATH (a list, like PATH), then the
// directory of the lmbench binary and its plugins/ subdirectory, then the
// user data directory ($XDG_DATA_HOME/lmbench/plugins). The variable adds
// to the default places (a plugin there shadows a bundled one of the same
// name); it does not replace them.
func SearchDirs() []string {
	var dirs []string
	for _, d := range filepath.SplitList(os.Getenv("LMBENCH_PLUGIN_PATH")) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		d := filepath.Dir(exe)
		dirs = append(dirs, d, filepath.Join(d, "plugins"))
	}
	data := os.Getenv("XDG_DATA_HOME")
	if data == "" {
		if home, err := os.UserHomeDir(); err == nil {
			data = filepath.Join(home, ".local", "share")
		}
	}
	if runtime.GOOS == "windows" {
		data = os.Getenv("AppData")
	}
	if data != "" {
		dirs = append(dirs, filepath.Join(data, "lmbench", "plugins"))
	}
	return dirs
}

// Discover lists the plugins of kind ("" = both) in dirs, sorted by kind
// and name. A name found in several directories is taken from the first;
// the others are listed as shadowed.
func Discover(kind string, dirs []string) []Candidate {
	byKey := map[string]*Candidate{}
	var order []string
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			k, name, ok := parseName(e.Name())
			if !ok || (kind != "" && k != kind) {
				continue
			}
			path := filepath.Join(dir, e.Name())
			if !isExecutable(path) {
				continue
			}
			key := k + "/" + name
			if c, ok := byKey[key]; ok {
				if c.Path != path {
					c.Shadowed = append(c.Shadowed, path)
				}
				continue
			}
			byKey[key] = &Candidate{Kind: k, Name: name, Path: path, Refused: writableByOthers(dir, path)}
			order = append(order, key)
		}
	}
	sort.Strings(order)
	out := make([]Candidate, len(order))
	for i, k := range order {
		out[i] = *byKey[k]
	}
	return out
}

func parseName(file string) (kind, name string, ok bool) {
	if runtime.GOOS == "windows" {
		file = strings.TrimSuffix(file, ".exe")
	}
	for _, k := range []string{"workload", "exporter"} {
		if rest, found := strings.CutPrefix(file, "lmbench-"+k+"-"); found && rest != "" &&
			!strings.ContainsAny(rest, ". ") {
			return k, rest, true
		}
	}
	return "", "", false
}

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	if err != nil || st.IsDir() {
		return false
	}
	return runtime.GOOS == "windows" || st.Mode()&0o111 != 0
}

// Find returns the binary for a plugin named by the user: a value with a
// path separator is a path, anything else a name looked up in dirs.
func Find(kind, nameOrPath string, dirs []string) (string, error) {
	if strings.ContainsRune(nameOrPath, os.PathSeparator) || strings.ContainsRune(nameOrPath, '/') {
		if !isExecutable(nameOrPath) {
			return "", fmt.Errorf("%s plugin %s: not an executable file", kind, nameOrPath)
		}
		return filepath.Abs(nameOrPath)
	}
	found := Discover(kind, dirs)
	var names []string
	for _, c := range found {
		if c.Name == nameOrPath {
			if c.Refused != "" {
				return "", fmt.Errorf("%s plugin %s: not run: %s", kind, c.Path, c.Refused)
			}
			return c.Path, nil
		}
		names = append(names, c.Name)
	}
	avail := "none found"
	if len(names) > 0 {
		avail = "available: " + strings.Join(names, ", ")
	}
	return "", fmt.Errorf("unknown %s %q (%s; searched %s)", kind, nameOrPath, avail, strings.Join(dirs, string(os.PathListSeparator)))
}

// writableByOthers says why a plugin found in dir is refused, or "": the
// directory or the file is writable by every user (a sticky /tmp
// included: anyone can add a binary there).
func writableByOthers(dir, path string) string {
	if runtime.GOOS == "windows" {
		return ""
	}
	if st, err := os.Stat(dir); err == nil && st.Mode().Perm()&0o002 != 0 {
		return fmt.Sprintf("the directory %s is writable by every user (mode %v); make it not (chmod o-w %s)", dir, st.Mode().Perm(), dir)
	}
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o002 != 0 {
		return fmt.Sprintf("the file is writable by every user (mode %v); chmod o-w %s", st.Mode().Perm(), path)
	}
	return ""
}

// Names are the names of the plugins of kind found where lmbench looks
// (SearchDirs) that it may run.
func Names(kind string) []string {
	var out []string
	for _, c := range Discover(kind, SearchDirs()) {
		if c.Refused == "" {
			out = append(out, c.Name)
		}
	}
	return out
}
