package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// guideFiles returns the code blocks of docs/plugins.md whose first line
// is "// file: NAME", by name.
func guideFiles(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("../../docs/plugins.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string]string{}
	var (
		in   bool
		name string
		body strings.Builder
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !in && line == "```go":
			in, name = true, ""
			body.Reset()
		case in && line == "```":
			in = false
			if name != "" {
				files[name] = body.String()
			}
		case in && name == "" && body.Len() == 0 && strings.HasPrefix(line, "// file: "):
			name = strings.TrimPrefix(line, "// file: ")
		case in:
			body.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return files
}

// TestPluginGuide follows docs/plugins.md as a third party would: a module
// outside the repository, the SDK through a replace directive, the guide's
// main.go and main_test.go as written; its tests must pass, and the plugin
// must run through the real host against an engine that is not ours.
func TestPluginGuide(t *testing.T) {
	needBinaries(t)
	t.Parallel()
	files := guideFiles(t)
	if len(files) != 2 || files["main.go"] == "" || files["main_test.go"] == "" {
		t.Fatalf("docs/plugins.md: want the code blocks main.go and main_test.go, found %d: %v", len(files), keys(files))
	}
	sdk, err := filepath.Abs("../../sdk")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The guide's set-up commands, outside any workspace (go mod tidy may
	// fetch go.mod files through the module proxy, as for any module).
	goEnv := append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = dir, goEnv
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("mod", "init", "example.com/qa-burst")
	run("mod", "edit", "-require=github.com/lmbench/lmbench/sdk@v0.0.0", "-replace=github.com/lmbench/lmbench/sdk="+sdk)
	run("mod", "tidy")
	if out := run("test", "-count=1", "./..."); !strings.Contains(out, "ok") {
		t.Fatalf("go test: %s", out)
	}
	bin := filepath.Join(dir, "lmbench-workload-qa-burst")
	run("build", "-o", bin, ".")

	eng := newFakeEngine(t)
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload-plugin", bin,
		"--tokens-per-gb-kvcache", "1000", "--kv-cache-volume", "1", "--qb-questions", "6", "--qb-concurrency", "3",
		"--qb-context-words", "40", "--no-interactive", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	reqs := eng.requests()
	if len(reqs) != 6 {
		t.Fatalf("the engine got %d requests, want 6", len(reqs))
	}
	for _, body := range reqs {
		p := promptOf(body)
		if !strings.HasPrefix(p, "Context: lorem") || !strings.Contains(p, "\nQuestion ") || body["max_tokens"].(float64) != 32 {
			t.Errorf("unexpected request: max_tokens %v, prompt %q", body["max_tokens"], trunc(p))
		}
	}
	rows := readCSV(t, filepath.Join(out, "bench_results.csv"))
	if len(rows) != 7 || !strings.Contains(strings.Join(rows[0], ","), "tag_q") {
		t.Errorf("bench_results.csv: %d rows, header %v", len(rows), rows[0])
	}
	// A bad option fails before any request, naming the flag.
	bad := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload-plugin", bin,
		"--tokens-per-gb-kvcache", "1000", "--qb-questions", "2", "--qb-concurrency", "3", "--no-interactive", "--output-dir", t.TempDir())
	if bad.code != 2 || !strings.Contains(bad.stderr, "--qb-concurrency: must be at most --qb-questions (2), got 3") {
		t.Errorf("bad option: exit %d, stderr:\n%s", bad.code, bad.stderr)
	}
	if n := len(eng.requests()); n != 6 {
		t.Errorf("the bad run sent %d requests", n-6)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestPluginGuideSnippets holds docs/plugins.md's other Go blocks to the
// code they quote: a block whose first line is "// from: PATH" has each of
// its lines, in order, among PATH's (a signature without its body), so a
// snippet compiles because the file it comes from does (examples/tooluse
// builds in TestToolUseExample).
func TestPluginGuideSnippets(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/plugins.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := 0
	for _, block := range strings.Split(string(b), "```go\n")[1:] {
		body, _, _ := strings.Cut(block, "```")
		first, rest, _ := strings.Cut(body, "\n")
		path, ok := strings.CutPrefix(first, "// from: ")
		if !ok {
			if !strings.HasPrefix(first, "// file: ") {
				t.Errorf("docs/plugins.md: a Go block that is neither a file nor quoted from one: %q", first)
			}
			continue
		}
		blocks++
		src, err := os.ReadFile(filepath.Join("../..", path))
		if err != nil {
			t.Errorf("docs/plugins.md quotes %s: %v", path, err)
			continue
		}
		lines := strings.Split(string(src), "\n")
		at := 0
		for _, want := range strings.Split(strings.TrimRight(rest, "\n"), "\n") {
			for at < len(lines) && lines[at] != want && !strings.HasPrefix(lines[at], want+" {") {
				at++
			}
			if at == len(lines) {
				t.Errorf("docs/plugins.md quotes %s, which has no line %q after the block's earlier lines", path, want)
				break
			}
			at++
		}
	}
	if blocks < 4 {
		t.Errorf("docs/plugins.md: %d blocks quoted from code, want the tool-use section's 4", blocks)
	}
}
