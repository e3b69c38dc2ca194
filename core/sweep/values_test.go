package sweep

import (
	"fmt"
	"testing"
)

func TestParseSpec(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec, key, values, err string
	}{
		{spec: "mrc_qps=1,2,4,8", key: "mrc_qps", values: "[1 2 4 8]"},
		{spec: "mrc-qps=0.5, 1.5", key: "mrc_qps", values: "[0.5 1.5]"},
		{spec: "mrc_qps=1:8:x2", key: "mrc_qps", values: "[1 2 4 8]"},
		{spec: "mrc_qps=1:10:x2", key: "mrc_qps", values: "[1 2 4 8]"},
		{spec: "max_concurrency=1..4", key: "max_concurrency", values: "[1 2 3 4]"},
		{spec: "mrc_qps=0.1:0.5:+0.1", key: "mrc_qps", values: "[0.1 0.2 0.3 0.4 0.5]"},
		{spec: "mrc_qps=3..3", key: "mrc_qps", values: "[3]"},
		{spec: "mrc_qps", err: `--sweep "mrc_qps": want KEY=VALUES, e.g. mrc_qps=1,2,4,8, mrc_qps=1:8:x2 or max_concurrency=1..8`},
		{spec: "mrc_qps=1,x", err: `--sweep mrc_qps=1,x: "x" is not a number`},
		{spec: "mrc_qps=2,2", err: "--sweep mrc_qps=2,2: the values must ascend, got 2 after 2"},
		{spec: "mrc_qps=8..1", err: "--sweep mrc_qps=8..1: the range ends at 1, below its start 8"},
		{spec: "mrc_qps=1:8", err: `--sweep mrc_qps=1:8: a range is START:STOP:xFACTOR or START:STOP:+STEP, got "1:8"`},
		{spec: "mrc_qps=0:8:x2", err: `--sweep mrc_qps=0:8:x2: a geometric range needs START above 0 and a FACTOR above 1, got "0:8:x2"`},
		{spec: "mrc_qps=1:8:-1", err: `--sweep mrc_qps=1:8:-1: the step of a range starts with x (a factor) or + (an increment), got "-1"`},
		{spec: "mrc_qps=1:5000:+1", err: "--sweep mrc_qps=1:5000:+1: 1001 points, at most 1000"},
	}
	for _, tt := range tests {
		s, err := ParseSpec(tt.spec)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseSpec(%q) = %v, %v; want error %q", tt.spec, s.Values, err, tt.err)
			}
			continue
		}
		if err != nil || s.Key != tt.key || fmt.Sprint(s.Values) != tt.values || s.Text != tt.spec {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %q %s", tt.spec, s, err, tt.key, tt.values)
		}
	}
}

func TestSpecFlagAndWholeNumbers(t *testing.T) {
	t.Parallel()
	s, err := ParseSpec("--max-concurrency=1,2.5")
	if err != nil {
		t.Fatal(err)
	}
	if s.Key != "max_concurrency" || s.Flag() != "--max-concurrency" {
		t.Errorf("key %q, flag %q; want max_concurrency, --max-concurrency", s.Key, s.Flag())
	}
	if err := s.CheckWhole(); err == nil || err.Error() != "--sweep --max-concurrency=1,2.5: max_concurrency takes whole numbers, got 2.5" {
		t.Errorf("CheckWhole: %v", err)
	}
	if s, _ := ParseSpec("n=1..3"); s.CheckWhole() != nil {
		t.Errorf("CheckWhole(%v): %v, want none", s.Values, s.CheckWhole())
	}
}
