package sdktest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lmbench/lmbench/sdk/host/fault"
	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

// misbehaving is a workload whose measured Step panics or thinks too long.
type misbehaving struct {
	mode string
}

func (w *misbehaving) Step(context.Context, workload.StepInput) (workload.StepOutput, error) {
	switch w.mode {
	case "panic":
		panic("Step panics on purpose")
	case "slow":
		time.Sleep(1500 * time.Millisecond)
	}
	return workload.Done(), nil
}

func (w *misbehaving) OnFinished(context.Context, []workload.Result) error { return nil }

// TestStepFaultsInTheHostsWords: a Step that panics or takes longer than
// the limit fails sdktest with the sentence the host prints for it
// (package fault), not a crashed test binary or silence.
func TestStepFaultsInTheHostsWords(t *testing.T) {
	t.Parallel()
	// The slow Step's figure depends on the machine: its words do not.
	slowHead, slowTail, _ := strings.Cut(fault.SlowStep("misbehaving", 1.5), "1.5")
	for _, tt := range []struct {
		mode       string
		limit      time.Duration
		head, tail string // the error's start and what follows the figure; "" none
	}{
		{"panic", 0, fault.Crashed("workload", "misbehaving", "in-process", "Step") + ": panic: Step panics on purpose", ""},
		{"slow", 500 * time.Millisecond, slowHead, slowTail},
		{"slow", -1, "", ""},
	} {
		t.Run(tt.mode+tt.limit.String(), func(t *testing.T) {
			t.Parallel()
			def := workload.Definition[noOptions]{Name: "misbehaving", Prefix: "mb", Summary: "misbehaves",
				New: func(noOptions, workload.Env) (workload.Workload, error) { return &misbehaving{mode: tt.mode}, nil }}
			_, err := sdktest.RunE(def, sdktest.Options{StepLimit: tt.limit})
			if tt.head == "" {
				if err != nil {
					t.Errorf("error %v, want none without a limit", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.head) || !strings.Contains(err.Error(), tt.tail) {
				t.Errorf("error %v, want it to hold %q and %q", err, tt.head, tt.tail)
			}
		})
	}
}
