package workload_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/lmbench/lmbench/sdk/handshake"
	"github.com/lmbench/lmbench/sdk/option"
	pluginv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/plugin/v1"
	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
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

func definition(newFn func(testOptions, workload.Env) (workload.Workload, error)) workload.Definition[testOptions] {
	return workload.Definition[testOptions]{
		Name: "test-wl", Prefix: "tw", Summary: "a test workload", Version: "1.2.3",
		TagKeys: []string{"doc", "query"}, WantsResponseText: true,
		Defaults: testOptions{Docs: 2, Policy: "random"},
		New:      newFn,
	}
}

// stepDef is a definition whose workload is f.
func stepDef(f *fake) workload.Definition[testOptions] {
	return definition(func(testOptions, workload.Env) (workload.Workload, error) { return f, nil })
}

func configure(t *testing.T, srv workloadv1.WorkloadServiceServer, req *workloadv1.ConfigureRequest) *workloadv1.ConfigureResponse {
	t.Helper()
	if req == nil {
		req = &workloadv1.ConfigureRequest{}
	}
	resp, err := srv.Configure(context.Background(), req)
	if err != nil {
		t.Fatalf("Configure: %v", err)
	}
	return resp
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	srv := workload.NewServer(stepDef(&fake{}), zerolog.Nop())
	got, err := srv.Describe(context.Background(), &workloadv1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := &workloadv1.DescribeResponse{
		Info: &pluginv1.PluginInfo{
			Kind: handshake.WorkloadKind, Name: "test-wl", Version: "1.2.3", Summary: "a test workload", Prefix: "tw",
			ProtocolMinor: handshake.ProtocolMinor, SdkVersion: handshake.SDKVersion,
		},
		Options: []*pluginv1.OptionSpec{
			{Name: "docs", Type: pluginv1.OptionType_OPTION_TYPE_INT, Help: "Documents.", Min: proto.Float64(1),
				Default: &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_IntValue{IntValue: 2}}},
			{Name: "policy", Type: pluginv1.OptionType_OPTION_TYPE_ENUM, EnumValues: []string{"random", "tile"},
				Default: &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_StringValue{StringValue: "random"}}},
		},
		TagKeys:           []string{"doc", "query"},
		WantsResponseText: true,
	}
	if d := cmp.Diff(want, got, protocmp.Transform()); d != "" {
		t.Errorf("Describe (-want +got):\n%s", d)
	}
}

func TestDescribeBadOptions(t *testing.T) {
	t.Parallel()
	type bad struct {
		X int `opt:"NotKebab"`
	}
	srv := workload.NewServer(workload.Definition[bad]{Name: "bad"}, zerolog.Nop())
	_, err := srv.Describe(context.Background(), &workloadv1.DescribeRequest{})
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), `opt name "NotKebab" must be kebab-case`) {
		t.Errorf("Describe error = %v, want Internal naming the bad option", err)
	}
}

func TestConfigurePassesCommonAndLogger(t *testing.T) {
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
	configure(t, srv, &workloadv1.ConfigureRequest{
		Options: map[string]*pluginv1.OptionValue{"docs": option.Value(5), "policy": option.Value("tile")},
		Common:  &workloadv1.Common{Seed: 7, Model: "m", KvCacheVolumeGb: 1.5, TokensPerGb: 1000, CompletionsMode: true},
	})
	want := workload.Common{Seed: 7, Model: "m", KVCacheVolumeGB: 1.5, TokensPerGB: 1000, CompletionsMode: true}
	if d := cmp.Diff(want, gotEnv.Common); d != "" {
		t.Errorf("Env.Common (-want +got):\n%s", d)
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
			"unsupported":   []int{1}, // dropped: no OptionValue for it
		}}, nil
	})
	srv := workload.NewServer(def, zerolog.Nop())
	got := configure(t, srv, &workloadv1.ConfigureRequest{Options: map[string]*pluginv1.OptionValue{"docs": option.Value(4)}})
	want := &workloadv1.ConfigureResponse{
		Title: "test-wl",
		Resolved: map[string]*pluginv1.OptionValue{
			"docs": option.Value(4), "policy": option.Value("tile"),
			"num-documents": option.Value(3), "ratio": option.Value(0.5),
		},
		Banner:          []*pluginv1.Field{{Label: "Documents", Value: "3"}, {Label: "Policy", Value: "tile"}},
		PlannedRequests: 12,
	}
	if d := cmp.Diff(want, got, protocmp.Transform()); d != "" {
		t.Errorf("Configure (-want +got):\n%s", d)
	}
}

func TestConfigureErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		options map[string]*pluginv1.OptionValue
		newErr  error
		want    []*pluginv1.FieldError
	}{
		{
			name:    "bound",
			options: map[string]*pluginv1.OptionValue{"docs": option.Value(0)},
			want:    []*pluginv1.FieldError{{Option: "docs", Message: "must be >= 1, got 0"}},
		},
		{
			name:    "unknown and mistyped",
			options: map[string]*pluginv1.OptionValue{"doc": option.Value(1), "policy": option.Value(1)},
			want: []*pluginv1.FieldError{
				{Option: "doc", Message: "unknown option"},
				{Option: "policy", Message: "expected a string, got 1"},
			},
		},
		{
			name:    "several from Validate",
			options: map[string]*pluginv1.OptionValue{"docs": option.Value(13)},
			want: []*pluginv1.FieldError{
				{Option: "docs", Message: "13 documents are unlucky"},
				{Option: "policy", Message: "and so is random"},
			},
		},
		{
			name:   "field error from New",
			newErr: option.Errorf("docs", "needs %d more documents", 2),
			want:   []*pluginv1.FieldError{{Option: "docs", Message: "needs 2 more documents"}},
		},
		{
			name:   "plain error from New",
			newErr: errors.New("cannot load the corpus"),
			want:   []*pluginv1.FieldError{{Message: "cannot load the corpus"}},
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
			got := configure(t, srv, &workloadv1.ConfigureRequest{Options: tc.options})
			if d := cmp.Diff(tc.want, got.GetErrors(), protocmp.Transform()); d != "" {
				t.Errorf("errors (-want +got):\n%s", d)
			}
			if tc.newErr == nil && called {
				t.Error("New was called with invalid options")
			}
			// A failed Configure leaves the server unconfigured.
			_, err := srv.Step(context.Background(), &workloadv1.StepRequest{Phase: workloadv1.Phase_PHASE_WARMUP})
			if status.Code(err) != codes.FailedPrecondition {
				t.Errorf("Step after failed Configure: %v, want FailedPrecondition", err)
			}
		})
	}
}

func TestBeforeConfigure(t *testing.T) {
	t.Parallel()
	srv := workload.NewServer(stepDef(&fake{}), zerolog.Nop())
	if _, err := srv.Step(context.Background(), &workloadv1.StepRequest{}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("Step: %v, want FailedPrecondition", err)
	}
	if _, err := srv.OnFinished(context.Background(), &workloadv1.OnFinishedRequest{}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("OnFinished: %v, want FailedPrecondition", err)
	}
}

func TestStepInput(t *testing.T) {
	t.Parallel()
	var got workload.StepInput
	srv := workload.NewServer(stepDef(&fake{step: func(in workload.StepInput) (workload.StepOutput, error) {
		got = in
		return workload.Done(), nil
	}}), zerolog.Nop())
	configure(t, srv, nil)
	if _, err := srv.Step(context.Background(), &workloadv1.StepRequest{
		Phase: workloadv1.Phase_PHASE_MEASURE, OffsetNs: int64(1500 * time.Millisecond), InFlight: 4,
	}); err != nil {
		t.Fatal(err)
	}
	want := workload.StepInput{Phase: workload.Measure, Offset: 1500 * time.Millisecond, InFlight: 4}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("StepInput (-want +got):\n%s", d)
	}
}

func text(s string) *workloadv1.Segment {
	return &workloadv1.Segment{Kind: &workloadv1.Segment_Text{Text: s}}
}
func ref(id string) *workloadv1.Segment {
	return &workloadv1.Segment{Kind: &workloadv1.Segment_ContentId{ContentId: id}}
}

func TestStepConversion(t *testing.T) {
	t.Parallel()
	const offset = int64(3 * time.Second)
	doc := workload.Segment{Ref: "doc0"}
	sched := int64(2500 * time.Millisecond)
	tests := []struct {
		name string
		out  workload.StepOutput
		want *workloadv1.StepResponse
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
			want: &workloadv1.StepResponse{
				Requests: []*workloadv1.Request{{
					Id: "q0", MaxTokens: 32, Tags: map[string]string{"doc": "0", "query": "1"}, ScheduledNs: &sched,
					Body: &workloadv1.Request_Chat{Chat: &workloadv1.Chat{Messages: []*workloadv1.Message{
						{Role: "system", Content: []*workloadv1.Segment{text("be brief")}},
						{Role: "user", Content: []*workloadv1.Segment{ref("doc0"), text(" question?")}},
						{Role: "assistant", Content: []*workloadv1.Segment{text("ok")}},
					}}},
				}},
				Next: &workloadv1.StepResponse_WakeAtNs{WakeAtNs: offset},
			},
		},
		{
			name: "completion, default max tokens, no schedule; wake at",
			out:  workload.Send(workload.Completion("c0", doc, workload.Text("tail"))).WakeAt(5 * time.Second),
			want: &workloadv1.StepResponse{
				Requests: []*workloadv1.Request{{
					Id: "c0", MaxTokens: workload.DefaultMaxTokens,
					Body: &workloadv1.Request_Completion{Completion: &workloadv1.Completion{Prompt: []*workloadv1.Segment{ref("doc0"), text("tail")}}},
				}},
				Next: &workloadv1.StepResponse_WakeAtNs{WakeAtNs: int64(5 * time.Second)},
			},
		},
		{
			name: "zero output steps again now",
			out:  workload.StepOutput{},
			want: &workloadv1.StepResponse{Next: &workloadv1.StepResponse_WakeAtNs{WakeAtNs: offset}},
		},
		{
			name: "wake at",
			out:  workload.WakeAt(4 * time.Second),
			want: &workloadv1.StepResponse{Next: &workloadv1.StepResponse_WakeAtNs{WakeAtNs: int64(4 * time.Second)}},
		},
		{
			name: "wait for finish",
			out:  workload.WaitForFinish(),
			want: &workloadv1.StepResponse{Next: &workloadv1.StepResponse_WaitForFinish{WaitForFinish: true}},
		},
		{
			name: "wait for finish or",
			out:  workload.Send().WaitForFinishOr(7 * time.Second),
			want: &workloadv1.StepResponse{Next: &workloadv1.StepResponse_WakeAtOrOnFinishNs{WakeAtOrOnFinishNs: int64(7 * time.Second)}},
		},
		{
			name: "done",
			out:  workload.Done(),
			want: &workloadv1.StepResponse{Next: &workloadv1.StepResponse_Done{Done: true}},
		},
		{
			name: "the last next wins",
			out:  workload.WaitForFinish().WakeAt(time.Second).Done(),
			want: &workloadv1.StepResponse{Next: &workloadv1.StepResponse_Done{Done: true}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := workload.NewServer(stepDef(&fake{step: func(workload.StepInput) (workload.StepOutput, error) { return tc.out, nil }}), zerolog.Nop())
			configure(t, srv, nil)
			got, err := srv.Step(context.Background(), &workloadv1.StepRequest{Phase: workloadv1.Phase_PHASE_MEASURE, OffsetNs: offset})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got, protocmp.Transform()); d != "" {
				t.Errorf("StepResponse (-want +got):\n%s", d)
			}
		})
	}
}

func TestStepErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		out      workload.StepOutput
		err      error
		wantCode codes.Code
		wantMsg  string
	}{
		{"request without id", workload.Send(workload.Chat("", workload.User(workload.Text("x")))), nil, codes.InvalidArgument, "request without id"},
		{"chat without messages", workload.Send(workload.Chat("q")), nil, codes.InvalidArgument, "request q: chat request without messages"},
		{"step error", workload.StepOutput{}, errors.New("out of documents"), codes.Unknown, "step: out of documents"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := workload.NewServer(stepDef(&fake{step: func(workload.StepInput) (workload.StepOutput, error) { return tc.out, tc.err }}), zerolog.Nop())
			configure(t, srv, nil)
			_, err := srv.Step(context.Background(), &workloadv1.StepRequest{Phase: workloadv1.Phase_PHASE_MEASURE})
			st, _ := status.FromError(err)
			if st.Code() != tc.wantCode || st.Message() != tc.wantMsg {
				t.Errorf("Step error = %v, want %v %q", err, tc.wantCode, tc.wantMsg)
			}
		})
	}
}

func contentIDs(resp *workloadv1.StepResponse) []string {
	var ids []string
	for _, c := range resp.GetContents() {
		ids = append(ids, c.GetId()+"="+c.GetText())
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
	configure(t, srv, nil)
	var got [][]string
	for range 4 {
		resp, err := srv.Step(context.Background(), &workloadv1.StepRequest{Phase: workloadv1.Phase_PHASE_WARMUP})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, contentIDs(resp))
	}
	want := [][]string{{"doc=shared document", "other=second document"}, {"late=registered in step 2"}, nil, nil}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("contents per step (-want +got):\n%s", d)
	}
}

func TestOnFinished(t *testing.T) {
	t.Parallel()
	var got []workload.Result
	srv := workload.NewServer(stepDef(&fake{onFinished: func(rs []workload.Result) error {
		got = append(got, rs...)
		return nil
	}}), zerolog.Nop())
	configure(t, srv, nil)
	_, err := srv.OnFinished(context.Background(), &workloadv1.OnFinishedRequest{Results: []*workloadv1.Result{
		{Id: "q0", Phase: workloadv1.Phase_PHASE_MEASURE, Success: true, Text: "answer", TtftS: 0.125, LatencyS: 1.5,
			InputTokens: 1000, OutputTokens: 32, FinishOffsetNs: int64(2 * time.Second)},
		{Id: "w0", Phase: workloadv1.Phase_PHASE_WARMUP, Success: false, Error: "HTTP 500", TtftS: -1, LatencyS: 0.25},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []workload.Result{
		{ID: "q0", Phase: workload.Measure, Success: true, Text: "answer", TTFT: 0.125, Latency: 1.5,
			InputTokens: 1000, OutputTokens: 32, Finish: 2 * time.Second},
		{ID: "w0", Phase: workload.Warmup, Error: "HTTP 500", TTFT: -1, Latency: 0.25},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("results (-want +got):\n%s", d)
	}
}

func TestOnFinishedError(t *testing.T) {
	t.Parallel()
	srv := workload.NewServer(stepDef(&fake{onFinished: func([]workload.Result) error { return errors.New("bad answer") }}), zerolog.Nop())
	configure(t, srv, nil)
	_, err := srv.OnFinished(context.Background(), &workloadv1.OnFinishedRequest{})
	if st, _ := status.FromError(err); st.Code() != codes.Unknown || st.Message() != "on finished: bad answer" {
		t.Errorf("OnFinished error = %v, want Unknown %q", err, "on finished: bad answer")
	}
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	r := workload.NewRegistry()
	if seg := r.Register("a", "alpha"); seg != (workload.Segment{Ref: "a"}) {
		t.Errorf("Register = %+v, want a reference to a", seg)
	}
	r.Register("a", "alpha")
	if txt, ok := r.Lookup("a"); !ok || txt != "alpha" {
		t.Errorf("Lookup(a) = %q, %v", txt, ok)
	}
	if _, ok := r.Lookup("b"); ok {
		t.Error("Lookup(b) found unregistered content")
	}
	if d := cmp.Diff([]workload.Content{{ID: "a", Text: "alpha"}}, r.Drain()); d != "" {
		t.Errorf("Drain (-want +got):\n%s", d)
	}
	if got := r.Drain(); got != nil {
		t.Errorf("second Drain = %v, want nothing", got)
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
	}
	wg.Wait()
	if n := len(r.Drain()); n != 1 {
		t.Errorf("Drain has %d entries, want 1", n)
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
