package main

// End-to-end tests of lmbench report and lmbench compare: real runs of
// the built-in engine, the report opened in a real headless browser.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// reportShotEnv names a file the report's screenshot is also copied to.
const reportShotEnv = "E2E_REPORT_SCREENSHOT" // not LMBENCH_*: lmbench rejects unknown variables of its own prefix

// ldqaMeasured is builtinLDQA's measured requests: 0.5 GB × 4096 tokens
// per GB / 300-token documents = 6 documents, 3 questions each.
const ldqaMeasured = 18

// builtinLDQA runs long-doc-qa on the built-in engine into a new
// directory, with extra flags (the engine's), and returns the directory.
func builtinLDQA(t *testing.T, extra ...string) string {
	t.Helper()
	out := t.TempDir()
	args := append([]string{"run", "--engine-url", "builtin", "--workload", "long-doc-qa",
		"--kv-cache-volume", "0.5", "--ldqa-document-length", "300", "--ldqa-query-per-document", "3",
		"--sim-tokens-per-gb", "4096", "--sim-decode-per-token", "1ms", "--sim-prefill-per-token", "200us",
		"--no-interactive", "-q", "--no-csv", "--output-dir", out}, extra...)
	r := lmbench(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	return out
}

// chromium finds Debian's chromium, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium not found: apt-get install chromium (.ci/run installs it) to open the report in a headless browser")
	return ""
}

// headless runs chromium on a file with args and returns its stdout and
// its log (stderr).
func headless(t *testing.T, browser, page string, args ...string) (stdout, log string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// No proxy works: anything the page tried to fetch would fail.
	base := []string{"--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--proxy-server=127.0.0.1:9", "--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, browser, append(append(base, args...), "file://"+page)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
	}
	return out.String(), errb.String()
}

var consoleLine = regexp.MustCompile(`(?m)^.*:CONSOLE[:(].*$`)

// TestReportOpensInChromium runs long-doc-qa and multi-round-chat (the
// engine's /metrics scraped every 100 ms, an SLO) on the built-in engine
// with --report, and a 2-point sweep, then lmbench report of the sweep and
// both runs, and opens each page in headless Chromium: every chart drew
// data (the page's check on <body>), no panel is empty, nothing was logged
// to the console; a screenshot of the sweep and two-run report is kept.
func TestReportOpensInChromium(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	browser := chromium(t)
	ldqa := builtinLDQA(t, "--report", "--metrics-interval", "100ms")
	mrcArgs := []string{"--engine-url", "builtin", "--workload", "multi-round-chat",
		"--mrc-shared-prompt-length", "20", "--mrc-chat-history-length", "30", "--mrc-user-input-length", "4",
		"--mrc-output-length", "7", "--sim-tokens-per-gb", "150", "--kv-cache-volume", "1", "--sim-decode-per-token", "2ms",
		"--slo", "ttft:50,tpot:20", "--metrics-interval", "100ms", "-q", "--no-csv"}
	mrc := t.TempDir()
	r := lmbench(t, nil, append([]string{"run", "--mrc-qps", "8", "--mrc-duration", "2", "--no-interactive", "--output-dir", mrc, "--report"}, mrcArgs...)...)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if want := "Report: " + filepath.Join(mrc, "report.html"); !strings.Contains(r.stdout, want) {
		t.Errorf("run --report: the summary does not print %q:\n%s", want, r.stdout)
	}
	sweep := t.TempDir()
	r = lmbench(t, nil, append([]string{"sweep", "--mrc-duration", "1", "--sweep", "mrc_qps=4:8:x2", "--output-dir", sweep}, mrcArgs...)...)
	if r.code != 0 {
		t.Fatalf("sweep: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	both := filepath.Join(t.TempDir(), "report.html")
	r = lmbench(t, nil, "report", sweep, ldqa, mrc, "-o", both)
	if r.code != 0 || !strings.Contains(r.stdout, "Report: "+both) {
		t.Fatalf("report: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	body := regexp.MustCompile(`<body([^>]*)>`)
	attr := func(tag, name string) string {
		m := regexp.MustCompile(name + `="([^"]*)"`).FindStringSubmatch(tag)
		if m == nil {
			return "(absent)"
		}
		return m[1]
	}
	for _, page := range []string{filepath.Join(ldqa, "report.html"), filepath.Join(mrc, "report.html"), both} {
		src, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		panels := strings.Count(string(src), `<figure class="panel"`)
		dom, log := headless(t, browser, page, "--dump-dom")
		m := body.FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("%s: no <body> in the rendered page:\n%.2000s", page, dom)
		}
		if ok, bad := attr(m[1], "data-ok"), attr(m[1], "data-bad"); ok != "true" {
			t.Errorf("%s: data-ok=%s: charts without data: %s", page, ok, bad)
		}
		if got := attr(m[1], "data-charts"); got != strconv.Itoa(panels) || panels < 18 {
			t.Errorf("%s: %s charts drew, the page has %d panels (want every one, and at least 18)", page, got, panels)
		}
		if got := attr(m[1], "data-empty"); got != "0" {
			t.Errorf("%s: %s panels without data", page, got)
		}
		if lines := consoleLine.FindAllString(log, -1); len(lines) > 0 {
			t.Errorf("%s: the page logged to the console:\n%s", page, strings.Join(lines, "\n"))
		}
	}
	// The screenshot is as tall as the page (the page measures itself).
	height := 9000
	{
		dom, _ := headless(t, browser, both, "--window-size=1400,1000", "--dump-dom")
		if m := body.FindStringSubmatch(dom); m != nil {
			if h, err := strconv.Atoi(attr(m[1], "data-height")); err == nil {
				height = min(h, 30000)
			}
		}
	}
	// The two-run report has the comparison section: the workloads
	// differ, so it says why the requests are not paired.
	src, _ := os.ReadFile(both)
	// The sweep's section comes first, with its curves; the runs have their
	// engine-metrics charts and their goodput against the SLO.
	for _, want := range []string{`id="compare"`, "not paired: the workloads differ (long-doc-qa, multi-round-chat)",
		`id="B-ttft-by-round"`, `id="A-ttft-by-doc"`, `id="sweep-1"`, "2 points over mrc_qps (--mrc-qps), SLO ttft:50,tpot:20",
		`id="sweep-1-sweep-ttft"`, `id="sweep-1-sweep-tpot"`, `id="sweep-1-sweep-e2e"`, `id="sweep-1-sweep-goodput"`, `id="sweep-1-sweep-rate"`,
		`id="A-engine-requests"`, `id="B-engine-kv-usage"`, `id="B-engine-prefix-hit-rate"`, "<td>ttft</td><td>50</td>", "<h4>Cache ledger</h4>"} {
		if !strings.Contains(string(src), want) {
			t.Errorf("the two-run report lacks %q", want)
		}
	}

	// Kept with go test -artifacts (under -outputdir); copied to
	// $E2E_REPORT_SCREENSHOT when set.
	shot := filepath.Join(t.ArtifactDir(), "report.png")
	headless(t, browser, both, "--window-size=1400,"+strconv.Itoa(height), "--screenshot="+shot)
	png, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	if len(png) < 50_000 || string(png[1:4]) != "PNG" {
		t.Errorf("screenshot %s: %d bytes, not a PNG of a drawn page", shot, len(png))
	}
	if dst := os.Getenv(reportShotEnv); dst != "" {
		if err := os.WriteFile(dst, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot of the sweep and two-run report: %s", dst)
	}
	t.Logf("screenshot: %s", shot)
}

// TestCompareCacheOnOff runs the same long-doc-qa (same seed) on the
// built-in engine with its prefix cache on (A) and off (B): lmbench
// compare reports TTFT's ratio beyond noise, with its interval, and pairs
// the requests by id.
func TestCompareCacheOnOff(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	on := builtinLDQA(t)
	off := builtinLDQA(t, "--sim-gpu-gb", "0", "--sim-cpu-gb", "0")
	r := lmbench(t, nil, "compare", on, off)
	if r.code != 0 {
		t.Fatalf("compare: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	row := regexp.MustCompile(`(?m)^\s*TTFT mean \(ms\)\s+\S+\s+\S+\s+\+\S+\s+(\S+)\s+\[(\S+), (\S+)\]\s+\*$`).FindStringSubmatch(r.stdout)
	if row == nil {
		t.Fatalf("no TTFT mean row with a ratio, its interval and the beyond-noise mark:\n%s", r.stdout)
	}
	for _, want := range []string{"Per-request pairing (same workload and seed): 18 requests paired by id", "TTFT ratio B/A per request: median"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("compare output lacks %q:\n%s", want, r.stdout)
		}
	}

	if strings.Contains(r.stderr, "compares a run with itself") {
		t.Errorf("two runs called one:\n%s", r.stderr)
	}
	// The same run twice (its directory, then its journal) is said to be
	// one run compared with itself.
	r = lmbench(t, nil, "compare", on, filepath.Join(on, "bench_journal.jsonl"))
	if want := "are the same run (journal "; r.code != 0 || !strings.Contains(r.stderr, want) ||
		!strings.Contains(r.stderr, "this compares a run with itself") {
		t.Errorf("compare X X: exit %d, want 0 and %q in stderr:\n%s", r.code, want, r.stderr)
	}

	r = lmbench(t, nil, "compare", "--json", on, off)
	if r.code != 0 {
		t.Fatalf("compare --json: exit %d\n%s", r.code, r.stderr)
	}
	var doc struct {
		Comparisons []struct {
			Metrics []struct {
				Key    string   `json:"key"`
				Ratio  *float64 `json:"ratio"`
				Lo     *float64 `json:"ci_low"`
				Hi     *float64 `json:"ci_high"`
				Beyond bool     `json:"beyond_noise"`
			} `json:"metrics"`
			Pairing *struct {
				Paired      int      `json:"paired"`
				Median      *float64 `json:"ttft_ratio_median"`
				FasterShare *float64 `json:"faster_share"`
			} `json:"pairing"`
		} `json:"comparisons"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("compare --json: %v\n%s", err, r.stdout)
	}
	if len(doc.Comparisons) != 1 {
		t.Fatalf("%d comparisons, want 1", len(doc.Comparisons))
	}
	c := doc.Comparisons[0]
	for _, m := range c.Metrics {
		if m.Key != "ttft_mean" {
			continue
		}
		// Without the cache every question prefills its whole document.
		if m.Ratio == nil || m.Lo == nil || m.Hi == nil || !(*m.Lo > 1 && *m.Lo <= *m.Ratio && *m.Ratio <= *m.Hi) || !m.Beyond {
			t.Errorf("ttft_mean: ratio %v, interval [%v, %v], beyond %v; want a ratio above 1 inside an interval above 1", ptr(m.Ratio), ptr(m.Lo), ptr(m.Hi), m.Beyond)
		}
	}
	p := c.Pairing
	if p == nil || p.Paired != ldqaMeasured || p.Median == nil || *p.Median <= 1 || p.FasterShare == nil || *p.FasterShare >= 0.5 {
		t.Errorf("pairing %+v: want %d pairs, median ratio above 1, most requests slower", p, ldqaMeasured)
	}
}

func ptr(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestReportBadInput: a path that is not a run is named, with what was
// expected, and nothing is written.
func TestReportBadInput(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	empty := t.TempDir()
	badSweep := t.TempDir()
	if err := os.WriteFile(filepath.Join(badSweep, "sweep_summary.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "r.html")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report", empty, "-o", out}, 1, empty + ": no bench_journal.jsonl: not an lmbench output directory"},
		{[]string{"report", filepath.Join(empty, "nope"), "-o", out}, 1, filepath.Join(empty, "nope") + ": no such file or directory (want a run's output directory or its bench_journal.jsonl)"},
		{[]string{"report", "-o", out}, 2, "no run given"},
		{[]string{"report", badSweep, "-o", out}, 1, filepath.Join(badSweep, "sweep_summary.json") + ": not a sweep summary"},
		{[]string{"compare", empty}, 2, "compare needs two runs or more"},
		{[]string{"compare", "--resamples", "3", empty, empty}, 2, "--resamples: must be >= 200, got 3"},
	} {
		r := lmbench(t, nil, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("lmbench %v: exit %d, stderr:\n%s\nwant exit %d and %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s written despite the errors", out)
	}
}
