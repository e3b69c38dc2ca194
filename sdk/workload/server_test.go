package workload_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/wire"
	"github.com/lmbench/lmbench/sdk/workload"
)

// fake is a Workload made of func fields; nil fields do nothing.
type fake struct {
	step       func(workload.StepInput) (workload.StepOutput, error)
	onFinished func([]workload.Result) error
}

func (f *fake) Step(_ context.Context, in workload.StepInput) (workload.StepOutput, error) {
	if f.step == nil {
		return workload.Done(), nil
	}
	return f.step(in)
}

func (f *fake) OnFinished(_ context.Context, rs []workload.Result) error {
	if f.onFinished == nil {
		return nil
	}
	return f.onFinished(rs)
}

// rich also implements every optional interface.
type rich struct {
	fake
	resolved map[string]any
}

func (r *rich) Banner() []workload.Field {
	return []workload.Field{{Label: "Documents", Value: "3"}, {Label: "Policy", Value: "tile"}}
}
func (r *rich) Resolved() map[string]any { return r.resolved }
func (r *rich) PlannedRequests() int     { return 12 }

type testOptions struct {
	Docs   int    `opt:"docs" help:"Documents." min:"1"`
	Policy string `opt:"policy" enum:"random,tile"`
}

func (o testOptions) Validate() error {
	if o.Docs == 13 {
		return errors.Join(option.Errorf("docs", "13 documents are unlucky"), option.Errorf("policy", "and so is %s", o.Policy))
	}
	return nil
}

// Precheck stands for a check that reads a file: 7 documents are "missing".
func (o testOptions) Precheck() error {
	if o.Docs == 7 {
		return option.Errorf("docs", "document 7 is missing")
	}
	return nil
}

func definition(newFn func(testOptions, workload.Env) (workload.Workload, error)) workload.Definition[testOptions] {
	return workload.Definition[testOptions]{
		Name: "test-wl", Prefix: "tw", Summary: "a test workload", Version: "1.2.3",
		TagKeys: []string{"doc", "query"}, WantsResponseText: true, CountsTokens: true, Shards: true,
		Defaults: testOptions{Docs: 2, Policy: "random"},
		New:      newFn,
	}
}

// stepDef is a definition whose workload is f.
func stepDef(f *fake) workload.Definition[testOptions] {
	return definition(func(testOptions, workload.Env) (workload.Workload, error) { return f, nil })
}

// newestHost announces every capability of this SDK.
var newestHost = protocol.HostInfo{Version: "test", ProtocolMinor: protocol.Minor, Capabilities: protocol.HostCapabilities}

// configureAs runs Describe as host, then Configure with cfg.
func configureAs(t *testing.T, srv protocol.WorkloadService, host protocol.HostInfo, cfg protocol.WorkloadConfig) protocol.Configured {
	t.Helper()
	if _, err := srv.Describe(context.Background(), host); err != nil {
		t.Fatalf("Describe: %v", err)
	}
	resp, err := srv.Configure(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Configure: %v", err)
	}
	return resp
}

// configure is configureAs the newest host.
func configure(t *testing.T, srv protocol.WorkloadService, cfg protocol.WorkloadConfig) protocol.Configured {
	t.Helper()
	return configureAs(t, srv, newestHost, cfg)
}

func step(t *testing.T, srv protocol.WorkloadService, req protocol.StepRequest) protocol.StepResponse {
	t.Helper()
	resp, err := srv.Step(context.Background(), req)
	if err != nil {
		t.Fatalf("Step: %v", err)
	}
	return resp
}

// overGRPC serves srv over an in-memory gRPC connection and returns its
// client, as the host sees the plugin.
func overGRPC(t *testing.T, srv protocol.WorkloadService) protocol.WorkloadService {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer(wire.GRPCServerOptions()...)
	wire.RegisterWorkload(s, srv)
	go s.Serve(lis)
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		s.Stop()
	})
	return wire.WorkloadClient(conn)
}

// scoringFake scores an answer 1 when it is "right", 0 otherwise.
type scoringFake struct{ fake }

func (f *scoringFake) Score(r workload.Result) map[string]float64 {
	if r.Text == "right" {
		return map[string]float64{"exact": 1}
	}
	return map[string]float64{"exact": 0}
}

// A scoring workload's scores travel back with the next Step, or in
// OnFinishedScored's answer; a host without the capability gets none.
func TestScores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	def := definition(func(testOptions, workload.Env) (workload.Workload, error) { return &scoringFake{}, nil })
	def.ScoreKeys = []string{"exact"}
	srv := workload.NewServer(def, zerolog.Nop())
	configure(t, srv, protocol.WorkloadConfig{})
	resp, err := srv.Step(ctx, protocol.StepRequest{Phase: protocol.Measure,
		Finished: []protocol.Result{{ID: "a", Phase: protocol.Measure, Text: "right"}, {ID: "b", Phase: protocol.Measure, Text: "wrong"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []protocol.Score{
		{RequestID: "a", Phase: protocol.Measure, Values: map[string]float64{"exact": 1}},
		{RequestID: "b", Phase: protocol.Measure, Values: map[string]float64{"exact": 0}},
	}
	if d := cmp.Diff(want, resp.Scores); d != "" {
		t.Errorf("Step's scores (-want +got):\n%s", d)
	}
	got, err := srv.(protocol.Scorer).OnFinishedScored(ctx, []protocol.Result{{ID: "c", Phase: protocol.Measure, Text: "right"}})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]protocol.Score{{RequestID: "c", Phase: protocol.Measure, Values: map[string]float64{"exact": 1}}}, got); d != "" {
		t.Errorf("OnFinishedScored's scores (-want +got):\n%s", d)
	}

	old := workload.NewServer(def, zerolog.Nop())
	configureAs(t, old, protocol.HostInfo{Version: "old", ProtocolMinor: 5, Capabilities: []string{protocol.FinishedInStep}}, protocol.WorkloadConfig{})
	resp, err = old.Step(ctx, protocol.StepRequest{Phase: protocol.Measure, Finished: []protocol.Result{{ID: "a", Phase: protocol.Measure, Text: "right"}}})
	if err != nil || resp.Scores != nil {
		t.Errorf("a host without scores: got %v, %v; want no scores", resp.Scores, err)
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	srv := workload.NewServer(stepDef(&fake{}), zerolog.Nop())
	got, err := srv.Describe(context.Background(), newestHost)
	if err != nil {
		t.Fatal(err)
	}
	want := protocol.WorkloadDescription{
		Info: protocol.PluginInfo{
			Kind: protocol.WorkloadKind, Name: "test-wl", Version: "1.2.3", Summary: "a test workload", Prefix: "tw",
			ProtocolMinor: protocol.Minor, SDKVersion: wire.SDKVersion,
			// Scores only for a definition that names some.
			Capabilities: slices.DeleteFunc(slices.Clone(protocol.WorkloadCapabilities), func(c string) bool { return c == protocol.Scores }),
		},
		Options: []protocol.OptionSpec{
			{Name: "docs", Type: protocol.OptionInt, Help: "Documents.", Min: new(1.0), Default: int64(2)},
			{Name: "policy", Type: protocol.OptionEnum, Enum: []string{"random", "tile"}, Default: "random"},
		},
		TagKeys:           []string{"doc", "query"},
		WantsResponseText: true,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Describe (-want +got):\n%s", d)
	}
}

func TestDescribeBadOptions(t *testing.T) {
	t.Parallel()
	type bad struct {
		X int `opt:"NotKebab"`
	}
	srv := workload.NewServer(workload.Definition[bad]{Name: "bad"}, zerolog.Nop())
	_, err := srv.Describe(context.Background(), newestHost)
	const want = `workload bad: invalid options struct: field X: opt name "NotKebab" must be kebab-case`
	if err == nil || err.Error() != want {
		t.Errorf("Describe error = %v, want %q", err, want)
	}
	if errors.Is(err, protocol.ErrOutOfOrder) {
		t.Errorf("Describe error %v is ErrOutOfOrder; it is a broken plugin, not a misbehaving host", err)
	}
}

func TestConfigurePassesCommonHostAndLogger(t *testing.T) {
	t.Parallel()
	var (
		gotEnv  workload.Env
		gotOpts testOptions
	)
	def := definition(func(o testOptions, env workload.Env) (workload.Workload, error) {
		gotEnv, gotOpts = env, o
		env.Logger.Info().Msg("configured")
		return &fake{}, nil
	})
	var logs bytes.Buffer
	srv := workload.NewServer(def, zerolog.New(&logs))
	configure(t, srv, protocol.WorkloadConfig{
		Options: protocol.Values{"docs": int64(5), "policy": "tile"},
		Common:  protocol.Common{Seed: 7, Model: "m", KVCacheVolumeGB: 1.5, TokensPerGB: 1000, CompletionsMode: true},
	})
	want := workload.Common{Seed: 7, Model: "m", KVCacheVolumeGB: 1.5, TokensPerGB: 1000, CompletionsMode: true}
	if d := cmp.Diff(want, gotEnv.Common); d != "" {
		t.Errorf("Env.Common (-want +got):\n%s", d)
	}
	if d := cmp.Diff(newestHost, gotEnv.Host); d != "" {
		t.Errorf("Env.Host (-want +got):\n%s", d)
	}
	if d := cmp.Diff(testOptions{Docs: 5, Policy: "tile"}, gotOpts); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	if gotEnv.Content == nil {
		t.Error("Env.Content is nil")
	}
	if !strings.Contains(logs.String(), "configured") {
		t.Errorf("Env.Logger did not reach the server's logger; logs: %q", logs.String())
	}
}

func TestConfigureResponse(t *testing.T) {
	t.Parallel()
	def := definition(func(o testOptions, env workload.Env) (workload.Workload, error) {
		return &rich{resolved: map[string]any{
			"num-documents": 3,        // a derived setting
			"policy":        "tile",   // a derived value replaces the option's
			"ratio":         0.5,      // float
			"unsupported":   []int{1}, // dropped: no option value for it
		}}, nil
	})
	srv := workload.NewServer(def, zerolog.Nop())
	got := configure(t, srv, protocol.WorkloadConfig{Options: protocol.Values{"docs": int64(4)}})
	want := protocol.Configured{
		Title: "test-wl",
		Resolved: protocol.Values{
			"docs": int64(4), "policy": "tile", "num-documents": int64(3), "ratio": 0.5,
		},
		Banner:          []protocol.Field{{Label: "Documents", Value: "3"}, {Label: "Policy", Value: "tile"}},
		PlannedRequests: 12,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Configure (-want +got):\n%s", d)
	}
}

func TestConfigureErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		options protocol.Values
		newErr  error
		want    []protocol.FieldError
	}{
		{
			name:    "bound",
			options: protocol.Values{"docs": int64(0)},
			want:    []protocol.FieldError{{Option: "docs", Message: "must be >= 1, got 0"}},
		},
		{
			name:    "unknown and mistyped",
			options: protocol.Values{"doc": int64(1), "policy": int64(1)},
			want: []protocol.FieldError{
				{Option: "doc", Message: "unknown option"},
				{Option: "policy", Message: "expected a string, got 1"},
			},
		},
		{
			name:    "several from Validate",
			options: protocol.Values{"docs": int64(13)},
			want: []protocol.FieldError{
				{Option: "docs", Message: "13 documents are unlucky"},
				{Option: "policy", Message: "and so is random"},
			},
		},
		{
			name:    "a bound and Validate together",
			options: protocol.Values{"docs": int64(13), "policy": "lru"},
			want: []protocol.FieldError{
				{Option: "docs", Message: "13 documents are unlucky"},
				{Option: "policy", Message: "and so is lru"},
			},
		},
		{
			name:   "field error from New",
			newErr: option.Errorf("docs", "needs %d more documents", 2),
			want:   []protocol.FieldError{{Option: "docs", Message: "needs 2 more documents"}},
		},
		{
			name:   "plain error from New",
			newErr: errors.New("cannot load the corpus"),
			want:   []protocol.FieldError{{Message: "cannot load the corpus"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			called := false
			srv := workload.NewServer(definition(func(testOptions, workload.Env) (workload.Workload, error) {
				called = true
				if tc.newErr != nil {
					return nil, tc.newErr
				}
				return &fake{}, nil
			}), zerolog.Nop())
			got := configure(t, srv, protocol.WorkloadConfig{Options: tc.options})
			if d := cmp.Diff(tc.want, got.Errors); d != "" {
				t.Errorf("errors (-want +got):\n%s", d)
			}
			if tc.newErr == nil && called {
				t.Error("New was called with invalid options")
			}
			// A failed Configure leaves the server unconfigured.
			_, err := srv.Step(context.Background(), protocol.StepRequest{Phase: protocol.Warmup})
			if !errors.Is(err, protocol.ErrOutOfOrder) {
				t.Errorf("Step after failed Configure: %v, want ErrOutOfOrder", err)
			}
		})
	}
}

func TestBeforeConfigure(t *testing.T) {
	t.Parallel()
	srv := workload.NewServer(stepDef(&fake{}), zerolog.Nop())
	if _, err := srv.Step(context.Background(), protocol.StepRequest{}); !errors.Is(err, protocol.ErrOutOfOrder) {
		t.Errorf("Step: %v, want ErrOutOfOrder", err)
	}
	if err := srv.OnFinished(context.Background(), nil); !errors.Is(err, protocol.ErrOutOfOrder) {
		t.Errorf("OnFinished: %v, want ErrOutOfOrder", err)
	}
}

// Over gRPC an out-of-order call is FailedPrecondition, and the client
// gives ErrOutOfOrder back.
func TestBeforeConfigureOverGRPC(t *testing.T) {
	t.Parallel()
	c := overGRPC(t, workload.NewServer(stepDef(&fake{}), zerolog.Nop()))
	_, err := c.Step(context.Background(), protocol.StepRequest{Phase: protocol.Warmup})
	if status.Code(err) != codes.FailedPrecondition || !errors.Is(err, protocol.ErrOutOfOrder) {
		t.Errorf("Step: %v (code %v), want FailedPrecondition and ErrOutOfOrder", err, status.Code(err))
	}
	err = c.OnFinished(context.Background(), nil)
	if status.Code(err) != codes.FailedPrecondition || !errors.Is(err, protocol.ErrOutOfOrder) {
		t.Errorf("OnFinished: %v (code %v), want FailedPrecondition and ErrOutOfOrder", err, status.Code(err))
	}
}

func TestStepInput(t *testing.T) {
	t.Parallel()
	var got workload.StepInput
	srv := workload.NewServer(stepDef(&fake{step: func(in workload.StepInput) (workload.StepOutput, error) {
		got = in
		return workload.Done(), nil
	}}), zerolog.Nop())
	configure(t, srv, protocol.WorkloadConfig{})
	step(t, srv, protocol.StepRequest{Phase: protocol.Measure, Offset: 1500 * time.Millisecond, InFlight: 4})
	want := workload.StepInput{Phase: workload.Measure, Offset: 1500 * time.Millisecond, InFlight: 4}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("StepInput (-want +got):\n%s", d)
	}
}

func TestStepResponse(t *testing.T) {
	t.Parallel()
	const offset = 3 * time.Second
	doc := workload.Segment{Ref: "doc0"}
	calls := []workload.ToolCall{{ID: "call_1", Name: "lookup", Arguments: `{"q":"kv"}`}}
	tool := workload.Tool{Name: "lookup", Description: "Looks things up.", Parameters: `{"type":"object"}`}
	tests := []struct {
		name string
		out  workload.StepOutput
		want protocol.StepResponse
	}{
		{
			name: "chat with segments, tags, max tokens, scheduled; send means now",
			out: workload.Send(
				workload.Chat("q0",
					workload.System(workload.Text("be brief")),
					workload.User(doc, workload.Text(" question?")),
					workload.Assistant(workload.Text("ok")),
				).WithMaxTokens(32).Tag("doc", "0").Tag("query", "1").At(2500 * time.Millisecond),
			),
			want: protocol.StepResponse{
				Requests: []protocol.Request{{
					ID: "q0", MaxTokens: 32, Tags: map[string]string{"doc": "0", "query": "1"},
					Scheduled: 2500 * time.Millisecond, HasScheduled: true,
					Messages: []protocol.Message{
						{Role: "system", Content: []protocol.Segment{{Text: "be brief"}}},
						{Role: "user", Content: []protocol.Segment{{Ref: "doc0"}, {Text: " question?"}}},
						{Role: "assistant", Content: []protocol.Segment{{Text: "ok"}}},
					},
				}},
				Next: protocol.Next{Kind: protocol.NextWakeAt, At: offset},
			},
		},
		{
			name: "completion, default max tokens, no schedule; wake at",
			out:  workload.Send(workload.Completion("c0", doc, workload.Text("tail"))).WakeAt(5 * time.Second),
			want: protocol.StepResponse{
				Requests: []protocol.Request{{
					ID: "c0", MaxTokens: workload.DefaultMaxTokens, Completion: true,
					Prompt: []protocol.Segment{{Ref: "doc0"}, {Text: "tail"}},
				}},
				Next: protocol.Next{Kind: protocol.NextWakeAt, At: 5 * time.Second},
			},
		},
		{
			name: "tool calls, tool replies and tools",
			out: workload.Send(workload.Chat("t0",
				workload.User(workload.Text("find kv")),
				workload.AssistantCalls(calls),
				workload.ToolReply("call_1", workload.Text("found")),
			).WithTools(tool)).Done(),
			want: protocol.StepResponse{
				Requests: []protocol.Request{{
					ID: "t0", MaxTokens: workload.DefaultMaxTokens,
					Messages: []protocol.Message{
						{Role: "user", Content: []protocol.Segment{{Text: "find kv"}}},
						{Role: "assistant", ToolCalls: calls},
						{Role: "tool", Content: []protocol.Segment{{Text: "found"}}, ToolCallID: "call_1"},
					},
					Tools: []protocol.Tool{tool},
				}},
				Next: protocol.Next{Kind: protocol.NextDone},
			},
		},
		{
			name: "zero output steps again now",
			out:  workload.StepOutput{},
			want: protocol.StepResponse{Next: protocol.Next{Kind: protocol.NextWakeAt, At: offset}},
		},
		{
			name: "wake at",
			out:  workload.WakeAt(4 * time.Second),
			want: protocol.StepResponse{Next: protocol.Next{Kind: protocol.NextWakeAt, At: 4 * time.Second}},
		},
		{
			name: "wait for finish",
			out:  workload.WaitForFinish(),
			want: protocol.StepResponse{Next: protocol.Next{Kind: protocol.NextWaitForFinish}},
		},
		{
			name: "wait for finish or",
			out:  workload.Send().WaitForFinishOr(7 * time.Second),
			want: protocol.StepResponse{Next: protocol.Next{Kind: protocol.NextWakeAtOrFinish, At: 7 * time.Second}},
		},
		{
			name: "done",
			out:  workload.Done(),
			want: protocol.StepResponse{Next: protocol.Next{Kind: protocol.NextDone}},
		},
		{
			name: "the last next wins",
			out:  workload.WaitForFinish().WakeAt(time.Second).Done(),
			want: protocol.StepResponse{Next: protocol.Next{Kind: protocol.NextDone}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := workload.NewServer(stepDef(&fake{step: func(workload.StepInput) (workload.StepOutput, error) { return tc.out, nil }}), zerolog.Nop())
			configure(t, srv, protocol.WorkloadConfig{})
			got := step(t, srv, protocol.StepRequest{Phase: protocol.Measure, Offset: offset})
			if d := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("StepResponse (-want +got):\n%s", d)
			}
		})
	}
}

func TestStepError(t *testing.T) {
	t.Parallel()
	boom := errors.New("out of documents")
	srv := workload.NewServer(stepDef(&fake{step: func(workload.StepInput) (workload.StepOutput, error) { return workload.StepOutput{}, boom }}), zerolog.Nop())
	configure(t, srv, protocol.WorkloadConfig{})
	_, err := srv.Step(context.Background(), protocol.StepRequest{Phase: protocol.Measure})
	if !errors.Is(err, boom) || err.Error() != "step: out of documents" {
		t.Errorf("Step error = %v, want %q wrapping the workload's error", err, "step: out of documents")
	}
	if errors.Is(err, protocol.ErrOutOfOrder) {
		t.Errorf("Step error %v is ErrOutOfOrder", err)
	}
}

// A host that did not announce ToolCalls cannot send tool calls, tool
// messages or tools: the server refuses such a request rather than let the
// host drop what makes it what it is.
func TestToolCallsNeedTheCapability(t *testing.T) {
	t.Parallel()
	calls := []workload.ToolCall{{ID: "call_1", Name: "lookup", Arguments: "{}"}}
	user := workload.User(workload.Text("hi"))
	older := protocol.HostInfo{Version: "old", ProtocolMinor: 0}
	noTools := protocol.HostInfo{Version: "partial", ProtocolMinor: 1, Capabilities: []string{protocol.FinishedInStep, protocol.ReleaseContent}}
	tests := []struct {
		name string
		host protocol.HostInfo
		req  workload.Request
		want string // "" = accepted
	}{
		{"tools, older host", older, workload.Chat("q", user).WithTools(workload.Tool{Name: "lookup"}),
			`request "q" uses tool calls, which this lmbench (protocol minor 0) does not send: update lmbench`},
		{"assistant calls, older host", older, workload.Chat("q", user, workload.AssistantCalls(calls)),
			`request "q" uses tool calls, which this lmbench (protocol minor 0) does not send: update lmbench`},
		{"tool reply, host without the capability", noTools, workload.Chat("q", user, workload.AssistantCalls(calls), workload.ToolReply("call_1", workload.Text("x"))),
			`request "q" uses tool calls, which this lmbench (protocol minor 1) does not send: update lmbench`},
		{"plain chat, older host", older, workload.Chat("q", user), ""},
		{"tools, newest host", newestHost, workload.Chat("q", user).WithTools(workload.Tool{Name: "lookup"}), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := workload.NewServer(stepDef(&fake{step: func(workload.StepInput) (workload.StepOutput, error) {
				return workload.Send(tc.req).Done(), nil
			}}), zerolog.Nop())
			configureAs(t, srv, tc.host, protocol.WorkloadConfig{})
			resp, err := srv.Step(context.Background(), protocol.StepRequest{Phase: protocol.Measure})
			if tc.want == "" {
				if err != nil || len(resp.Requests) != 1 {
					t.Errorf("Step = %d requests, %v; want the request accepted", len(resp.Requests), err)
				}
				return
			}
			if err == nil || err.Error() != tc.want {
				t.Errorf("Step error = %v, want %q", err, tc.want)
			}
		})
	}
}

func contentIDs(resp protocol.StepResponse) []string {
	var ids []string
	for _, c := range resp.Contents {
		ids = append(ids, c.ID+"="+c.Text)
	}
	return ids
}

// Content is shipped once, with the first Step response after it was
// registered, whether registered in New or in Step.
func TestContentShippedOnce(t *testing.T) {
	t.Parallel()
	var reg *workload.Registry
	steps := 0
	w := &fake{step: func(workload.StepInput) (workload.StepOutput, error) {
		steps++
		switch steps {
		case 2:
			reg.Register("late", "registered in step 2")
			reg.Register("doc", "shared document") // again, same text: nothing new
		case 3:
			reg.Register("late", "registered in step 2")
		}
		return workload.Send(), nil
	}}
	srv := workload.NewServer(definition(func(_ testOptions, env workload.Env) (workload.Workload, error) {
		reg = env.Content
		env.Content.Register("doc", "shared document")
		env.Content.Register("other", "second document")
		return w, nil
	}), zerolog.Nop())
	configure(t, srv, protocol.WorkloadConfig{})
	var got [][]string
	for range 4 {
		got = append(got, contentIDs(step(t, srv, protocol.StepRequest{Phase: protocol.Warmup})))
	}
	want := [][]string{{"doc=shared document", "other=second document"}, {"late=registered in step 2"}, nil, nil}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("contents per step (-want +got):\n%s", d)
	}
}

// stepsOf is one Step's content, released ids and registry size, as a
// test compares them.
type stepsOf struct {
	Contents []string
	Released []string
	Len      int
}

// releaser runs one func per Step against the workload's registry and
// records what each Step answered.
func releaser(t *testing.T, host protocol.HostInfo, script ...func(reg *workload.Registry)) []stepsOf {
	t.Helper()
	var reg *workload.Registry
	n := 0
	srv := workload.NewServer(definition(func(_ testOptions, env workload.Env) (workload.Workload, error) {
		reg = env.Content
		return &fake{step: func(workload.StepInput) (workload.StepOutput, error) {
			script[n](reg)
			n++
			return workload.Send(), nil
		}}, nil
	}), zerolog.Nop())
	configureAs(t, srv, host, protocol.WorkloadConfig{})
	var got []stepsOf
	for range script {
		resp := step(t, srv, protocol.StepRequest{Phase: protocol.Measure})
		got = append(got, stepsOf{Contents: contentIDs(resp), Released: resp.Released, Len: reg.Len()})
	}
	return got
}

func TestRegistryRelease(t *testing.T) {
	t.Parallel()
	script := []func(reg *workload.Registry){
		func(reg *workload.Registry) { reg.Register("a", "alpha"); reg.Register("b", "beta") },
		func(reg *workload.Registry) {
			reg.Release("a")                     // shipped: the host is told
			reg.Register("c", "gamma")           // shipped with this Step's answer ...
			reg.Release("c", "never-registered") // ... and released after its requests; unknown ids are ignored
			reg.Release("a")                     // twice: still told once
			reg.Register("d", "delta")           // registered and kept
			reg.Register("b", "beta")            // still known: a no-op
		},
		func(reg *workload.Registry) { reg.Register("c", "gamma registered again") }, // released: any text goes
		func(reg *workload.Registry) { reg.Register("a", "alpha, new text") },        // released: may come back with new text
	}
	want := []stepsOf{
		{Contents: []string{"a=alpha", "b=beta"}, Len: 2},
		{Contents: []string{"c=gamma", "d=delta"}, Released: []string{"a", "c"}, Len: 2},
		{Contents: []string{"c=gamma registered again"}, Len: 3},
		{Contents: []string{"a=alpha, new text"}, Len: 4},
	}
	t.Run("newest host", func(t *testing.T) {
		t.Parallel()
		if d := cmp.Diff(want, releaser(t, newestHost, script...)); d != "" {
			t.Errorf("steps (-want +got):\n%s", d)
		}
	})
	t.Run("host without ReleaseContent", func(t *testing.T) {
		t.Parallel()
		// The host keeps everything; the registry forgets all the same.
		older := slices.Clone(want)
		older[1].Released = nil
		if d := cmp.Diff(older, releaser(t, protocol.HostInfo{ProtocolMinor: 0}, script...)); d != "" {
			t.Errorf("steps (-want +got):\n%s", d)
		}
	})
}

func TestRegisterInTheStepThatReleasedIt(t *testing.T) {
	t.Parallel()
	reg := workload.NewRegistry()
	reg.Register("a", "alpha")
	reg.Drain()
	reg.Release("a")
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "released") {
			t.Errorf("Register after Release in one Step: recovered %v, want a panic naming the release", r)
		}
	}()
	reg.Register("a", "alpha again")
}

func TestOnFinished(t *testing.T) {
	t.Parallel()
	var got []workload.Result
	srv := workload.NewServer(stepDef(&fake{onFinished: func(rs []workload.Result) error {
		got = append(got, rs...)
		return nil
	}}), zerolog.Nop())
	configure(t, srv, protocol.WorkloadConfig{})
	results := []protocol.Result{
		{ID: "q0", Phase: protocol.Measure, Success: true, Text: "answer", TTFT: 0.125, Latency: 1.5,
			InputTokens: 1000, OutputTokens: 32, Finish: 2 * time.Second,
			ToolCalls: []protocol.ToolCall{{ID: "c", Name: "f", Arguments: "{}"}}},
		{ID: "w0", Phase: protocol.Warmup, Success: false, Error: "HTTP 500", TTFT: -1, Latency: 0.25},
	}
	if err := srv.OnFinished(context.Background(), results); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(results, got); d != "" {
		t.Errorf("results (-want +got):\n%s", d)
	}
}

func TestOnFinishedError(t *testing.T) {
	t.Parallel()
	srv := workload.NewServer(stepDef(&fake{onFinished: func([]workload.Result) error { return errors.New("bad answer") }}), zerolog.Nop())
	configure(t, srv, protocol.WorkloadConfig{})
	err := srv.OnFinished(context.Background(), nil)
	if err == nil || err.Error() != "on finished: bad answer" {
		t.Errorf("OnFinished error = %v, want %q", err, "on finished: bad answer")
	}
}

// Results that travel in a Step (FinishedInStep) reach OnFinished before
// the workload's Step runs, as they would through OnFinished.
func TestFinishedInStep(t *testing.T) {
	t.Parallel()
	var events []string
	srv := workload.NewServer(stepDef(&fake{
		step: func(in workload.StepInput) (workload.StepOutput, error) {
			events = append(events, fmt.Sprintf("step in_flight=%d", in.InFlight))
			return workload.WaitForFinish(), nil
		},
		onFinished: func(rs []workload.Result) error {
			for _, r := range rs {
				events = append(events, "finished "+r.ID)
			}
			return nil
		},
	}), zerolog.Nop())
	configure(t, srv, protocol.WorkloadConfig{})
	step(t, srv, protocol.StepRequest{Phase: protocol.Measure, InFlight: 2})
	step(t, srv, protocol.StepRequest{Phase: protocol.Measure, InFlight: 0, Finished: []protocol.Result{
		{ID: "a", Phase: protocol.Measure, Success: true}, {ID: "b", Phase: protocol.Measure, Success: true},
	}})
	want := []string{"step in_flight=2", "finished a", "finished b", "step in_flight=0"}
	if d := cmp.Diff(want, events); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

// An OnFinished error on results carried by a Step fails that Step, and
// the workload's Step is not called.
func TestFinishedInStepError(t *testing.T) {
	t.Parallel()
	stepped := false
	srv := workload.NewServer(stepDef(&fake{
		step:       func(workload.StepInput) (workload.StepOutput, error) { stepped = true; return workload.Done(), nil },
		onFinished: func([]workload.Result) error { return errors.New("bad answer") },
	}), zerolog.Nop())
	configure(t, srv, protocol.WorkloadConfig{})
	_, err := srv.Step(context.Background(), protocol.StepRequest{Phase: protocol.Measure, Finished: []protocol.Result{{ID: "a"}}})
	if err == nil || err.Error() != "on finished: bad answer" {
		t.Errorf("Step error = %v, want %q", err, "on finished: bad answer")
	}
	if stepped {
		t.Error("the workload's Step ran after OnFinished failed")
	}
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	r := workload.NewRegistry()
	if seg := r.Register("a", "alpha"); seg != (workload.Segment{Ref: "a"}) {
		t.Errorf("Register = %+v, want a reference to a", seg)
	}
	if seg := r.Register("a", "alpha"); seg != (workload.Segment{Ref: "a"}) {
		t.Errorf("Register again = %+v, want a reference to a", seg)
	}
	if n := r.Len(); n != 1 {
		t.Errorf("Len = %d, want 1", n)
	}
	r.Register("b", "beta")
	r.Release("a", "nope")
	if n := r.Len(); n != 1 {
		t.Errorf("Len after Release = %d, want 1", n)
	}
}

func TestRegistryPanicsOnChangedText(t *testing.T) {
	t.Parallel()
	r := workload.NewRegistry()
	r.Register("a", "alpha")
	defer func() {
		got, _ := recover().(string)
		if want := `workload: content "a" registered twice with different text`; got != want {
			t.Errorf("panic = %q, want %q", got, want)
		}
	}()
	r.Register("a", "beta")
}

func TestRegistryConcurrent(t *testing.T) {
	t.Parallel()
	r := workload.NewRegistry()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { r.Register("shared", "same text") })
		wg.Go(func() { r.Len() })
	}
	wg.Wait()
	if n := r.Len(); n != 1 {
		t.Errorf("Len = %d, want 1", n)
	}
}

func TestRequestBuilders(t *testing.T) {
	t.Parallel()
	base := workload.Chat("q", workload.User(workload.Text("hi"))).Tag("doc", "0")
	tagged := base.Tag("query", "1")
	overwritten := tagged.Tag("doc", "9")
	if d := cmp.Diff(map[string]string{"doc": "0"}, base.Tags); d != "" {
		t.Errorf("Tag changed the original (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"doc": "0", "query": "1"}, tagged.Tags); d != "" {
		t.Errorf("tagged (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"doc": "9", "query": "1"}, overwritten.Tags); d != "" {
		t.Errorf("overwritten (-want +got):\n%s", d)
	}

	calls := []workload.ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}}
	tool := workload.Tool{Name: "f", Parameters: `{"type":"object"}`}
	tests := []struct {
		name string
		got  workload.Request
		want workload.Request
	}{
		{"chat", workload.Chat("c", workload.User(workload.Text("x"))),
			workload.Request{ID: "c", Messages: []workload.Message{{Role: "user", Content: []workload.Segment{{Text: "x"}}}}, MaxTokens: workload.DefaultMaxTokens}},
		{"completion", workload.Completion("p", workload.Text("x")).WithMaxTokens(1),
			workload.Request{ID: "p", Prompt: []workload.Segment{{Text: "x"}}, Completion: true, MaxTokens: 1}},
		{"at", workload.Completion("p").At(0),
			workload.Request{ID: "p", Completion: true, MaxTokens: workload.DefaultMaxTokens, HasScheduled: true}},
		{"tools", workload.Chat("t", workload.AssistantCalls(calls, workload.Text("let me look")), workload.ToolReply("c1", workload.Text("42"))).WithTools(tool),
			workload.Request{ID: "t", MaxTokens: workload.DefaultMaxTokens, Tools: []workload.Tool{tool}, Messages: []workload.Message{
				{Role: "assistant", Content: []workload.Segment{{Text: "let me look"}}, ToolCalls: calls},
				{Role: "tool", Content: []workload.Segment{{Text: "42"}}, ToolCallID: "c1"},
			}}},
	}
	for _, tc := range tests {
		if d := cmp.Diff(tc.want, tc.got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
}

func TestStepOutputString(t *testing.T) {
	t.Parallel()
	q := func(id string) workload.Request { return workload.Chat(id, workload.User(workload.Text("x"))) }
	tests := []struct {
		out  workload.StepOutput
		want string
	}{
		{workload.StepOutput{}, "send [], then step again now"},
		{workload.Send(q("a"), q("b")), "send [a b], then step again now"},
		{workload.Send(q("a")).WakeAt(1500 * time.Millisecond), "send [a], then wake at 1.5s"},
		{workload.WaitForFinish(), "send [], then wait for a finish"},
		{workload.WaitForFinishOr(time.Second), "send [], then wait for a finish or 1s"},
		{workload.Send(q("z")).Done(), "send [z], then done"},
	}
	for _, tc := range tests {
		if got := tc.out.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestPhaseString(t *testing.T) {
	t.Parallel()
	for p, want := range map[workload.Phase]string{workload.Warmup: "warmup", workload.Measure: "measure", 0: "unspecified"} {
		if got := p.String(); got != want {
			t.Errorf("Phase(%d).String() = %q, want %q", p, got, want)
		}
	}
}

// TestExpectedReuseNeedsTheCapability: a declared reuse travels to a host
// that announces expected-reuse, and is dropped (not an error: it only
// informs the host's ledger) for one that does not.
func TestExpectedReuseNeedsTheCapability(t *testing.T) {
	t.Parallel()
	older := protocol.HostInfo{Version: "old", ProtocolMinor: 1, Capabilities: []string{protocol.FinishedInStep}}
	for _, tc := range []struct {
		name     string
		host     protocol.HostInfo
		declared bool
	}{{"newest host", newestHost, true}, {"host without the capability", older, false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := workload.Chat("q", workload.User(workload.Text("hi"))).WithExpectedReuse(480, protocol.TierCPU)
			srv := workload.NewServer(stepDef(&fake{step: func(workload.StepInput) (workload.StepOutput, error) {
				return workload.Send(req).Done(), nil
			}}), zerolog.Nop())
			configureAs(t, srv, tc.host, protocol.WorkloadConfig{})
			resp, err := srv.Step(context.Background(), protocol.StepRequest{Phase: protocol.Measure})
			if err != nil || len(resp.Requests) != 1 {
				t.Fatalf("Step = %d requests, %v", len(resp.Requests), err)
			}
			r := resp.Requests[0]
			got := r.HasExpectedCached && r.ExpectedCachedTokens == 480 && r.TargetTier == protocol.TierCPU
			gone := !r.HasExpectedCached && r.ExpectedCachedTokens == 0 && r.TargetTier == ""
			if tc.declared && !got || !tc.declared && !gone {
				t.Errorf("request sent as %+v; want the declaration %s", r, map[bool]string{true: "kept", false: "dropped"}[tc.declared])
			}
		})
	}
}

// TestIgnoreEOSNeedsTheCapability: a request asking for exactly its max
// tokens keeps the ask for a host that announces ignore-eos, and loses it
// for one that does not (which would not send it either).
func TestIgnoreEOSNeedsTheCapability(t *testing.T) {
	t.Parallel()
	older := protocol.HostInfo{Version: "old", ProtocolMinor: 2, Capabilities: []string{protocol.FinishedInStep}}
	for _, tc := range []struct {
		name string
		host protocol.HostInfo
		want bool
	}{{"newest host", newestHost, true}, {"host without the capability", older, false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := workload.Chat("q", workload.User(workload.Text("hi"))).WithMaxTokens(40).WithIgnoreEOS()
			srv := workload.NewServer(stepDef(&fake{step: func(workload.StepInput) (workload.StepOutput, error) {
				return workload.Send(req).Done(), nil
			}}), zerolog.Nop())
			configureAs(t, srv, tc.host, protocol.WorkloadConfig{})
			resp, err := srv.Step(context.Background(), protocol.StepRequest{Phase: protocol.Measure})
			if err != nil || len(resp.Requests) != 1 {
				t.Fatalf("Step = %d requests, %v", len(resp.Requests), err)
			}
			if r := resp.Requests[0]; r.IgnoreEOS != tc.want || r.MaxTokens != 40 {
				t.Errorf("request sent with IgnoreEOS %v, max tokens %d; want %v, 40", r.IgnoreEOS, r.MaxTokens, tc.want)
			}
		})
	}
}

// A check-only Configure answers the options' errors (the schema,
// Validate, Precheck) without creating the workload; Step still needs a
// real Configure.
func TestCheckOnlyConfigure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts protocol.Values
		want []protocol.FieldError
	}{
		{"valid", protocol.Values{"docs": int64(3)}, nil},
		{"schema", protocol.Values{"docs": int64(0)}, []protocol.FieldError{{Option: "docs", Message: "must be >= 1, got 0"}}},
		{"validate", protocol.Values{"docs": int64(13), "policy": "tile"}, []protocol.FieldError{
			{Option: "docs", Message: "13 documents are unlucky"}, {Option: "policy", Message: "and so is tile"}}},
		{"precheck", protocol.Values{"docs": int64(7)}, []protocol.FieldError{{Option: "docs", Message: "document 7 is missing"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			created := 0
			srv := workload.NewServer(definition(func(testOptions, workload.Env) (workload.Workload, error) {
				created++
				return &fake{}, nil
			}), zerolog.Nop())
			resp := configureAs(t, srv, newestHost, protocol.WorkloadConfig{Options: tc.opts, CheckOnly: true})
			if d := cmp.Diff(tc.want, resp.Errors, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("errors (-want +got):\n%s", d)
			}
			if created != 0 {
				t.Errorf("New ran %d times for a check-only Configure, want 0", created)
			}
			if _, err := srv.Step(context.Background(), protocol.StepRequest{Phase: protocol.Warmup}); !errors.Is(err, protocol.ErrOutOfOrder) {
				t.Errorf("Step after a check-only Configure: %v, want ErrOutOfOrder", err)
			}
		})
	}
}

// A workload that does not split its plan neither announces sharding nor
// accepts a sharded Configure; one that does gets the shard in Env.
func TestShardingCapability(t *testing.T) {
	t.Parallel()
	var got workload.Shard
	def := definition(func(_ testOptions, env workload.Env) (workload.Workload, error) { got = env.Shard; return &fake{}, nil })
	sharded := protocol.WorkloadConfig{Common: protocol.Common{Seed: 1, Shard: protocol.Shard{Index: 1, Count: 3}}}

	srv := workload.NewServer(def, zerolog.Nop())
	if _, err := srv.Describe(context.Background(), newestHost); err != nil {
		t.Fatal(err)
	}
	cr, err := srv.Configure(context.Background(), sharded)
	if err != nil || len(cr.Errors) > 0 {
		t.Fatalf("Configure = %v, %v", cr.Errors, err)
	}
	if got != (workload.Shard{Index: 1, Count: 3}) {
		t.Errorf("Env.Shard = %v, want 1/3", got)
	}

	def.Shards = false
	srv = workload.NewServer(def, zerolog.Nop())
	d, err := srv.Describe(context.Background(), newestHost)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(d.Info.Capabilities, protocol.Sharding) {
		t.Errorf("capabilities %v announce sharding for a workload without Shards", d.Info.Capabilities)
	}
	for _, checkOnly := range []bool{true, false} {
		cfg := sharded
		cfg.CheckOnly = checkOnly
		cr, err := srv.Configure(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(cr.Errors) != 1 || !strings.Contains(cr.Errors[0].Message, "cannot be sharded (--shard 1/3)") {
			t.Errorf("check-only %v: errors %v, want the workload refusing --shard 1/3", checkOnly, cr.Errors)
		}
	}
}
