package validate

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// lmbenchBinary is the binary make build wrote (LMBENCH_BIN, as in
// cmd/lmbench's end-to-end tests).
func lmbenchBinary(t *testing.T) string {
	dir := os.Getenv("LMBENCH_BIN")
	if dir == "" {
		t.Skip("LMBENCH_BIN is not set (make test sets it to the directory make build fills): the lmbench flags the manifests use are not checked")
	}
	return filepath.Join(dir, "lmbench")
}

// TestFlagsExist: every flag the manifests pass to lmbench, and every key
// of the run's config file, is one the binary has; a typo would surface
// only in a cluster, as pods that exit at once.
func TestFlagsExist(t *testing.T) {
	lmbench := lmbenchBinary(t)
	docs, errs := Load(manifests)
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	errs, notes := Flags(lmbench, docs)
	for _, n := range notes {
		t.Log(n)
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func TestFlagsExistRejects(t *testing.T) {
	lmbench := lmbenchBinary(t)
	cases := []struct {
		name     string
		file     string
		old, new string
		want     []string
	}{
		{"unknown flag", "shards.yaml", "- --no-interactive\n", "- --no-interactiv\n",
			[]string{"shards.yaml: Job lmbench-shards", "spec.template.spec.containers[0].args", "lmbench run has no flag --no-interactiv"}},
		{"unknown config key", "config.yaml", "    rp_rate: 30\n", "    rp_rat: 30\n",
			[]string{"config.yaml: ConfigMap lmbench-config", "data.lmbench.yaml", "key rp_rat is no option of lmbench run --workload random-prefill"}},
		{"option of another workload", "config.yaml", "    rp_rate: 30\n", "    ldqa_document_length: 30\n",
			[]string{"config.yaml: ConfigMap lmbench-config", "data.lmbench.yaml", "key ldqa_document_length"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			docs, errs := Load(brokenCopy(t, c.file, c.old, c.new))
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			errs, _ = Flags(lmbench, docs)
			for _, err := range errs {
				if containsAll(err.Error(), c.want) {
					t.Logf("rejected: %v", err)
					return
				}
			}
			t.Errorf("no error contains all of %q; got:\n%v", c.want, errors.Join(errs...))
		})
	}
}

// TestConfigsRun: lmbench itself accepts the run's config file for every
// shard (values, the workload's checks, its split), and refuses broken ones.
func TestConfigsRun(t *testing.T) {
	lmbench := lmbenchBinary(t)
	cases := []struct {
		name     string
		file     string
		old, new string
		want     []string // "" old: the manifests as they are, no error
	}{
		{name: "as shipped"},
		{"a value out of range", "config.yaml", "    rp_rate: 30\n", "    rp_rate: -30\n",
			[]string{"config.yaml: ConfigMap lmbench-config", "data.lmbench.yaml", "lmbench run --shard 0/3 refuses it", "rp_rate", "-30"}},
		{"a workload that cannot be sharded", "config.yaml", "    workload: random-prefill\n", "    workload: prefix-suffix-tuner\n",
			[]string{"config.yaml: ConfigMap lmbench-config", "data.lmbench.yaml", "--shard 0/3 refuses it", "cannot be sharded"}},
		{"a count that one shard gets none of", "config.yaml", "    workload: random-prefill\n", "    workload: long-doc-qa\n    ldqa_num_inflight_requests: 2\n",
			[]string{"config.yaml: ConfigMap lmbench-config", "data.lmbench.yaml", "--shard 2/3 refuses it", "inflight"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := manifests
			if c.old != "" {
				dir = brokenCopy(t, c.file, c.old, c.new)
			}
			docs, errs := Load(dir)
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			errs = Configs(lmbench, docs, t.TempDir())
			if c.want == nil {
				if err := errors.Join(errs...); err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, err := range errs {
				if containsAll(err.Error(), c.want) {
					t.Logf("rejected: %v", err)
					return
				}
			}
			t.Errorf("no error contains all of %q; got:\n%v", c.want, errors.Join(errs...))
		})
	}
}
