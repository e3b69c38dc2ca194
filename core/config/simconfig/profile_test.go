package simconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lmbench/lmbench/core/config"
)

// TestSimProfile: a profile's settings serve the engine, an explicit flag
// overrides its setting, and a profile naming no such setting is refused
// naming the flag, the file and the setting.
func TestSimProfile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "profile.json")
	if err := os.WriteFile(good, []byte(`{"schema":"lmbench.twin-profile/1","settings":{"prefill-per-token":"80µs","decode-per-token":"6ms","max-num-seqs":"12"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := simRegistry(t, "sim-")
	v, err := r.Load(config.Sources{Flags: flags(t, r, "--sim-profile="+good, "--sim-decode-per-token=7ms"), Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Config(v)
	if err != nil {
		t.Fatal(err)
	}
	if got.PrefillPerToken != 80*time.Microsecond || got.MaxNumSeqs != 12 || got.DecodePerToken != 7*time.Millisecond || got.Profile != good {
		t.Errorf("prefill %v, max-num-seqs %d, decode %v, profile %q; want 80µs and 12 from the profile, 7ms from the flag, the profile's path",
			got.PrefillPerToken, got.MaxNumSeqs, got.DecodePerToken, got.Profile)
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"settings":{"prefil-per-token":"80µs"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err = r.Load(config.Sources{Flags: flags(t, r, "--sim-profile="+bad), Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Config(v)
	if err == nil || !strings.Contains(err.Error(), "--sim-profile") || !strings.Contains(err.Error(), "prefil-per-token") {
		t.Errorf("Config with an unknown setting: %v; want an error naming --sim-profile and the setting", err)
	}
}
