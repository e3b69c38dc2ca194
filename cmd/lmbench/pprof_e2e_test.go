package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// LMBENCH_CPUPROFILE and LMBENCH_MEMPROFILE are not options: a run with
// them set is not refused, and leaves both profiles (gzipped protobuf, as
// go tool pprof reads them) when it ends.
func TestRunWritesProfilesToFiles(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	out, dir := t.TempDir(), t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	r := lmbench(t, []string{"LMBENCH_CPUPROFILE=" + cpu, "LMBENCH_MEMPROFILE=" + mem}, "run", "--engine-url", eng.srv.URL,
		"--workload", "random-prefill", "--rp-num-requests", "3", "--rp-request-length", "10", "--tokens-per-gb-kvcache", "1000",
		"--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, p := range []string{cpu, mem} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("profile not written: %v", err)
		}
		if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
			t.Errorf("%s: %d bytes, not a gzipped profile", filepath.Base(p), len(b))
		}
	}
}
