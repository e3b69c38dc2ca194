package workload_test

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/workload"
)

// The warmup sends one request per document, each once the previous one
// has finished, then ends the phase.
func ExampleSequentialWarmup() {
	warmup := workload.SequentialWarmup{
		N:    2,
		Log:  zerolog.New(os.Stdout),
		What: "documents sent",
		Request: func(i int) workload.Request {
			return workload.Chat("warmup_doc"+strconv.Itoa(i), workload.User(workload.Text("Document ..."))).WithMaxTokens(1)
		},
	}
	fmt.Println(warmup.Step(workload.StepInput{Phase: workload.Warmup}))
	fmt.Println(warmup.Step(workload.StepInput{Phase: workload.Warmup, InFlight: 1}))
	fmt.Println(warmup.Step(workload.StepInput{Phase: workload.Warmup}))
	fmt.Println(warmup.Step(workload.StepInput{Phase: workload.Warmup}))
	// Output:
	// {"level":"info","message":"Warmup 1/2"}
	// send [warmup_doc0], then wait for a finish
	// send [], then wait for a finish
	// {"level":"info","message":"Warmup 2/2"}
	// send [warmup_doc1], then wait for a finish
	// {"level":"info","message":"Warmup complete: 2 documents sent"}
	// send [], then done
}

func TestSequentialWarmup(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		n        int
		inFlight []int // StepInput.InFlight of each Step
		want     []string
		logs     string
	}{
		{"none", 0, []int{0}, []string{"send [], then done"}, "Warmup complete: 0 sessions\n"},
		{"one", 1, []int{0, 0}, []string{"send [w0], then wait for a finish", "send [], then done"},
			"Warmup 1/1\nWarmup complete: 1 sessions\n"},
		{"waits while one is in flight", 2, []int{0, 1, 2, 0, 1, 0},
			[]string{"send [w0], then wait for a finish", "send [], then wait for a finish", "send [], then wait for a finish",
				"send [w1], then wait for a finish", "send [], then wait for a finish", "send [], then done"},
			"Warmup 1/2\nWarmup 2/2\nWarmup complete: 2 sessions\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			warmup := workload.SequentialWarmup{
				N: tc.n, What: "sessions",
				Log:     zerolog.New(zerolog.ConsoleWriter{Out: &logs, NoColor: true, PartsExclude: []string{zerolog.TimestampFieldName, zerolog.LevelFieldName}}),
				Request: func(i int) workload.Request { return workload.Chat("w" + strconv.Itoa(i)) },
			}
			var got []string
			for _, n := range tc.inFlight {
				got = append(got, warmup.Step(workload.StepInput{Phase: workload.Warmup, InFlight: n}).String())
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("steps (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.logs, logs.String()); d != "" {
				t.Errorf("logs (-want +got):\n%s", d)
			}
		})
	}
}

func TestByPhase(t *testing.T) {
	t.Parallel()
	answer := func(what string) func(workload.StepInput) workload.StepOutput {
		return func(in workload.StepInput) workload.StepOutput {
			return workload.Send(workload.Chat(what + "@" + in.Offset.String())).Done()
		}
	}
	for phase, want := range map[workload.Phase]string{
		workload.Warmup:  "send [warm@1s], then done",
		workload.Measure: "send [measure@1s], then done",
	} {
		out, err := workload.ByPhase(workload.StepInput{Phase: phase, Offset: 1e9}, answer("warm"), answer("measure"))
		if err != nil || out.String() != want {
			t.Errorf("%v: %v, %v; want %s", phase, out, err, want)
		}
	}
	_, err := workload.ByPhase(workload.StepInput{Phase: 0}, answer("warm"), answer("measure"))
	if err == nil || !strings.Contains(err.Error(), "unknown phase unspecified") {
		t.Errorf("phase 0: %v, want an unknown phase error", err)
	}
}
