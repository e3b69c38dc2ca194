package wire

import (
	"math"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"

	exporterv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/exporter/v1"
	pluginv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/plugin/v1"
	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// roundTrip checks that each value comes back unchanged from to, the wire
// bytes (as the other process reads them) and from. cmp compares times
// with Equal, so a zero time that came back as the epoch is a difference.
func roundTrip[G any, P proto.Message](t *testing.T, cases map[string]G, to func(G) P, from func(P) G) {
	t.Helper()
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := to(in)
			b, err := proto.Marshal(m)
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			back := m.ProtoReflect().Type().New().Interface().(P)
			if err := proto.Unmarshal(b, back); err != nil {
				t.Fatalf("unmarshal: %v", err)
			}
			if d := cmp.Diff(in, from(back)); d != "" {
				t.Errorf("through the wire (-want +got):\n%s", d)
			}
		})
	}
}

var (
	someCalls = []protocol.ToolCall{
		{ID: "call_0", Name: "get_weather", Arguments: `{"city":"Paris"}`},
		{ID: "call_1", Name: "get-time", Arguments: `{}`},
	}
	someTools = []protocol.Tool{
		{Name: "get_weather", Description: "The weather in a city.", Parameters: `{"type":"object"}`},
		{Name: "get-time", Description: "The time."},
	}
	someSpecs = []protocol.OptionSpec{
		{Name: "document-length", Type: protocol.OptionInt, Default: int64(10000), Help: "Tokens per document.",
			Min: new(1.0), Max: new(1e6), Group: "documents", Advanced: true, Label: "Document length (tokens)"},
		{Name: "ratio", Type: protocol.OptionFloat, Default: 0.25, Help: "A ratio.", Min: new(0.0), Max: new(0.5)},
		{Name: "name", Type: protocol.OptionString, Default: "x", Help: "A name."},
		{Name: "verbose", Type: protocol.OptionBool, Default: true, Help: "Talk."},
		{Name: "policy", Type: protocol.OptionEnum, Default: "tile", Help: "Order.", Enum: []string{"random", "tile"}},
		{Name: "timeout", Type: protocol.OptionDuration, Default: int64(2 * time.Second), Help: "Wait.", Min: new(0.0)},
		{Name: "negative-bounds", Type: protocol.OptionInt, Default: int64(-3), Help: "Below zero.", Min: new(-10.0), Max: new(-1.0)},
	}
	someValues = protocol.Values{
		"s": "text", "empty": "", "i": int64(-7), "big": int64(math.MaxInt64), "f": 2.5, "zero-float": 0.0,
		"b": true, "off": false,
	}
	someInfo = protocol.PluginInfo{
		Kind: protocol.WorkloadKind, Name: "long-doc-qa", Version: "1.2.3", Summary: "Long documents, many questions",
		Prefix: "ldqa", ProtocolMinor: 1, Capabilities: []string{protocol.FinishedInStep, protocol.ToolCalls}, SDKVersion: "0.2.0",
	}
	someResults = []protocol.Result{
		{ID: "q0", Phase: protocol.Measure, Success: true, Text: "The answer.", ToolCalls: someCalls,
			TTFT: 0.125, Latency: 1.5, InputTokens: 10012, OutputTokens: 128, CachedTokens: 9984, Finish: 2500 * time.Millisecond},
		{ID: "w0", Phase: protocol.Warmup, Error: "HTTP 500: overloaded", TTFT: -1, Latency: 0.0625,
			InputTokens: 3, OutputTokens: 1, Finish: time.Nanosecond},
	}
)

func TestHostInfoRoundTrip(t *testing.T) {
	t.Parallel()
	roundTrip(t, map[string]protocol.HostInfo{
		"newest":  {Version: "1.4.0", ProtocolMinor: 1, Capabilities: []string{protocol.FinishedInStep, protocol.ReleaseContent, protocol.ToolCalls}},
		"unknown": {Version: "9.0.0", ProtocolMinor: 7, Capabilities: []string{"from-the-future"}},
	}, func(h protocol.HostInfo) *pluginv1.HostInfo { return toHost(h) }, fromHost)
}

func TestPluginInfoRoundTrip(t *testing.T) {
	t.Parallel()
	exp := someInfo
	exp.Kind, exp.Capabilities = protocol.ExporterKind, []string{protocol.ReleaseContent}
	roundTrip(t, map[string]protocol.PluginInfo{"workload": someInfo, "exporter": exp}, toInfo, fromInfo)
}

func TestOptionValueRoundTrip(t *testing.T) {
	t.Parallel()
	cases := map[string]any{}
	for k, v := range someValues {
		cases[k] = v
	}
	roundTrip(t, cases, toValue, fromValue)
}

func TestValuesRoundTrip(t *testing.T) {
	t.Parallel()
	type vs struct{ V protocol.Values }
	roundTrip(t, map[string]vs{"every type": {someValues}, "one": {protocol.Values{"n": int64(1)}}},
		func(v vs) *workloadv1.ConfigureRequest { return &workloadv1.ConfigureRequest{Options: toValues(v.V)} },
		func(r *workloadv1.ConfigureRequest) vs { return vs{fromValues(r.GetOptions())} })
}

// Go values that are not option values as they travel are normalised
// (ints and durations to int64) or dropped.
func TestToValueNormalises(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"int", 42, int64(42)},
		{"duration", 3 * time.Second, int64(3 * time.Second)},
		{"int32", int32(1), nil},
		{"slice", []string{"a"}, nil},
		{"nil", nil, nil},
	}
	for _, tc := range tests {
		if d := cmp.Diff(tc.want, fromValue(toValue(tc.in))); d != "" {
			t.Errorf("%s: (-want +got):\n%s", tc.name, d)
		}
	}
	got := fromValues(toValues(protocol.Values{"ok": "x", "dropped": []int{1}}))
	if d := cmp.Diff(protocol.Values{"ok": "x"}, got); d != "" {
		t.Errorf("values with an unsupported one (-want +got):\n%s", d)
	}
	if got := fromValues(toValues(nil)); got != nil {
		t.Errorf("nil values came back as %v", got)
	}
}

func TestWorkloadDescriptionRoundTrip(t *testing.T) {
	t.Parallel()
	roundTrip(t, map[string]protocol.WorkloadDescription{
		"full": {Info: someInfo, Options: someSpecs, TagKeys: []string{"doc", "query"}, WantsResponseText: true},
	}, toWorkloadDescription, fromWorkloadDescription)
}

func TestWorkloadConfigRoundTrip(t *testing.T) {
	t.Parallel()
	roundTrip(t, map[string]protocol.WorkloadConfig{
		"full": {Options: someValues, Common: protocol.Common{Seed: -42, Model: "meta-llama/Llama-3.1-8B",
			KVCacheVolumeGB: 12.5, TokensPerGB: 50000, CompletionsMode: true, Shard: protocol.Shard{Index: 2, Count: 3}}},
		"check only": {Options: someValues, Common: protocol.Common{Seed: 7, KVCacheVolumeGB: 1}, CheckOnly: true},
	}, toWorkloadConfig, fromWorkloadConfig)
}

func TestConfiguredRoundTrip(t *testing.T) {
	t.Parallel()
	roundTrip(t, map[string]protocol.Configured{
		"resolved": {Resolved: someValues, Banner: []protocol.Field{{Label: "Documents", Value: "3"}, {Label: "Policy", Value: "tile"}},
			Title: "long-doc-qa", PlannedRequests: 120},
		"errors": {Errors: []protocol.FieldError{{Option: "document-length", Message: "must be >= 1, got 0"}, {Message: "no corpus"}}},
	}, toConfigured, fromConfigured)
}

func TestStepRequestRoundTrip(t *testing.T) {
	t.Parallel()
	roundTrip(t, map[string]protocol.StepRequest{
		"warmup":            {Phase: protocol.Warmup, Offset: time.Nanosecond, InFlight: 1},
		"measure, finished": {Phase: protocol.Measure, Offset: 90 * time.Second, InFlight: 512, Finished: someResults},
	}, toStepRequest, fromStepRequest)
}

// A negative in-flight count (a host bug) cannot wrap around to 4 billion.
func TestStepRequestNegativeInFlight(t *testing.T) {
	t.Parallel()
	if got := fromStepRequest(toStepRequest(protocol.StepRequest{InFlight: -1})).InFlight; got != 0 {
		t.Errorf("InFlight -1 came back as %d, want 0", got)
	}
}

var (
	chatRequest = protocol.Request{
		ID: "doc0_q1",
		Messages: []protocol.Message{
			{Role: "system", Content: []protocol.Segment{{Text: "Answer briefly."}}},
			{Role: "user", Content: []protocol.Segment{{Ref: "doc0"}, {Text: " Why?"}, {Ref: "doc1"}}},
			{Role: "assistant", Content: []protocol.Segment{{Text: "Let me look."}}, ToolCalls: someCalls},
			{Role: "tool", Content: []protocol.Segment{{Text: `{"temp_c":21}`}}, ToolCallID: "call_0"},
			{Role: "developer", Content: []protocol.Segment{{Text: ""}}}, // an empty inline segment stays one
		},
		MaxTokens:    32,
		Tags:         map[string]string{"doc": "0", "query": "1"},
		Scheduled:    1500 * time.Millisecond,
		HasScheduled: true,
		Tools:        someTools,
		// Expected reuse of the document's tokens, from the CPU tier.
		ExpectedCachedTokens: 1984, HasExpectedCached: true, TargetTier: "cpu",
		PromptTokens: 2005,
		IgnoreEOS:    true,
	}
	// A request meant to be cold: 0 expected, declared.
	coldRequest = protocol.Request{ID: "cold", Messages: []protocol.Message{{Role: "user", Content: []protocol.Segment{{Text: "hi"}}}},
		MaxTokens: 1, HasExpectedCached: true}
	completionRequest = protocol.Request{
		ID: "c0", Prompt: []protocol.Segment{{Ref: "doc0"}, {Text: " Summary:"}}, Completion: true,
		MaxTokens: 1, Tags: map[string]string{"doc": "0"},
	}
	// Scheduled at offset 0 is still scheduled: optional on the wire.
	scheduledAtZero = protocol.Request{ID: "z", Messages: []protocol.Message{{Role: "user", Content: []protocol.Segment{{Text: "hi"}}}},
		MaxTokens: 128, HasScheduled: true}
)

func TestRequestRoundTrip(t *testing.T) {
	t.Parallel()
	roundTrip(t, map[string]protocol.Request{
		"chat with everything": chatRequest, "completion": completionRequest, "scheduled at zero": scheduledAtZero,
		"expected cold": coldRequest,
	}, func(r protocol.Request) *workloadv1.Request { return toRequest(&r) }, fromRequest)
}

func TestStepResponseRoundTrip(t *testing.T) {
	t.Parallel()
	full := protocol.StepResponse{
		Contents: []protocol.Content{{ID: "doc0", Text: "Once upon a time."}, {ID: "doc1", Text: "The end."}},
		Requests: []protocol.Request{chatRequest, completionRequest, scheduledAtZero},
		Released: []string{"old0", "old1"},
		Next:     protocol.Next{Kind: protocol.NextWakeAt, At: 5 * time.Second},
		Scores:   []protocol.Score{{RequestID: "q0", Phase: protocol.Measure, Values: map[string]float64{"exact": 0, "contains": 1}}},
	}
	cases := map[string]protocol.StepResponse{"full": full}
	for name, next := range map[string]protocol.Next{
		"wake at":                  {Kind: protocol.NextWakeAt, At: 7 * time.Second},
		"wake at zero":             {Kind: protocol.NextWakeAt},
		"wake at or on finish":     {Kind: protocol.NextWakeAtOrFinish, At: time.Millisecond},
		"wait for finish":          {Kind: protocol.NextWaitForFinish},
		"done":                     {Kind: protocol.NextDone},
		"wait for in flight below": {Kind: protocol.NextWaitForInFlightBelow, InFlightBelow: 7},
		"unspecified (invalid)":    {Kind: protocol.NextUnspecified},
	} {
		r := full
		r.Next = next
		cases[name] = r
	}
	roundTrip(t, cases, toStepResponse, fromStepResponse)
}

func TestResultsRoundTrip(t *testing.T) {
	t.Parallel()
	type rs struct{ R []protocol.Result }
	roundTrip(t, map[string]rs{"both phases": {someResults}},
		func(r rs) *workloadv1.OnFinishedRequest {
			return &workloadv1.OnFinishedRequest{Results: toResults(r.R)}
		},
		func(r *workloadv1.OnFinishedRequest) rs { return rs{fromResults(r.GetResults())} })
}

func TestExporterDescriptionRoundTrip(t *testing.T) {
	t.Parallel()
	info := someInfo
	info.Kind = protocol.ExporterKind
	roundTrip(t, map[string]protocol.ExporterDescription{"full": {Info: info, Options: someSpecs}},
		toExporterDescription, fromExporterDescription)
}

var someRun = protocol.RunMetadata{
	RunID: "20240101-120000", Workload: "long-doc-qa", Model: "m", OutputDir: "/out", LMBenchVersion: "1.4.0",
	TagKeys: []string{"doc", "query"}, ConfigJSON: `{"seed":42}`, Started: time.Unix(1700000000, 123456789),
}

func TestExporterConfigRoundTrip(t *testing.T) {
	t.Parallel()
	notStarted := someRun
	notStarted.Started = time.Time{}
	roundTrip(t, map[string]protocol.ExporterConfig{
		"full":               {Options: someValues, Run: someRun},
		"zero start is zero": {Options: protocol.Values{"file": "x.csv"}, Run: notStarted},
	}, toExporterConfig, fromExporterConfig)
}

func TestExporterConfiguredRoundTrip(t *testing.T) {
	t.Parallel()
	roundTrip(t, map[string]protocol.Configured{
		"resolved": {Resolved: someValues},
		"errors":   {Errors: []protocol.FieldError{{Option: "file", Message: "cannot create"}, {Message: "no disk"}}},
	}, toExporterConfigured, fromExporterConfigured)
}

// An exporter's Configure answer carries Resolved and Errors only.
func TestExporterConfiguredDropsWorkloadFields(t *testing.T) {
	t.Parallel()
	got := fromExporterConfigured(toExporterConfigured(protocol.Configured{
		Resolved: protocol.Values{"file": "x"}, Title: "t", PlannedRequests: 3, Banner: []protocol.Field{{Label: "a", Value: "b"}},
	}))
	if d := cmp.Diff(protocol.Configured{Resolved: protocol.Values{"file": "x"}}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	t.Parallel()
	at := func(sec, nsec int64) time.Time { return time.Unix(sec, nsec) }
	cases := map[string]protocol.Record{
		"full": {
			RunID: "r", Workload: "long-doc-qa", Phase: protocol.Measure, RequestID: "doc0_q1",
			Tags: map[string]string{"doc": "0", "query": "1"}, Success: true, Error: "partial", TTFT: 0.125, Latency: 2.5,
			DecodeSpeed: 51.2, ITL: 0.0185, InputTokens: 10012, OutputTokens: 128, CachedTokens: 9984,
			Scheduled: at(1700000000, 250000000), Submit: at(1700000000, 250000001),
			FirstToken: at(1700000000, 375000000), Finish: at(1700000002, 750000000), Seq: 7,
			Chunks: 130, UsageOutputTokens: 128, ChunkOffsetsUs: []int64{124_999, 143_000, 2_499_999}, ChunkOffsetsTruncated: true,
			FinishReason: "length", ResponseID: "chatcmpl-7", ResponseModel: "org/m-7b",
			ExplicitSchedule: true, StatedPromptTokens: 10005,
			OutputText: "The code is 4832.", Scores: map[string]float64{"exact": 1, "contains": 1}, TargetTier: protocol.TierBlend,
			OutputLogprobs: `[{"token":"The","logprob":-0.1,"top":[{"token":"The","logprob":-0.1}]}]`,
		},
		"the longest offset list": {
			RunID: "r", Phase: protocol.Measure, RequestID: "long", Success: true, Chunks: 20000, UsageOutputTokens: 20000,
			ChunkOffsetsUs: longOffsets(16384), ChunkOffsetsTruncated: true, FinishReason: "stop",
			Submit: at(1700000001, 0), Finish: at(1700000201, 0), Seq: 2,
		},
		"failed, zero times stay zero": {
			RunID: "r", Workload: "w", Phase: protocol.Warmup, RequestID: "w0", Tags: map[string]string{"doc": "1"},
			Error: "HTTP 500", TTFT: -1, Latency: 0.0625, InputTokens: 1, OutputTokens: 1, CachedTokens: 1,
			Submit: at(1700000001, 0), Finish: at(1700000001, 1), Seq: 1,
		},
	}
	// A field added to the record and not to the conversion would be
	// zero on the far side; "full" sets every one, so it would show.
	full := reflect.ValueOf(cases["full"])
	for i := range full.NumField() {
		if full.Field(i).IsZero() {
			t.Errorf("the full record leaves %s unset", full.Type().Field(i).Name)
		}
	}
	roundTrip(t, cases, func(r protocol.Record) *exporterv1.Record { return toRecord(&r) }, fromRecord)
}

// longOffsets are n chunk offsets 10 ms apart, beyond one varint byte.
func longOffsets(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = 50_000 + int64(i)*10_000
	}
	return out
}

func TestSummaryRoundTrip(t *testing.T) {
	t.Parallel()
	roundTrip(t, map[string]protocol.Summary{
		"full": {RunID: "r", JSON: `{"total_requests":3}`, Total: 3, Successful: 2, Failed: 1, Elapsed: 12.5, Interrupted: true},
	}, toSummary, fromSummary)
}

func TestFilesRoundTrip(t *testing.T) {
	t.Parallel()
	type fs struct{ F []protocol.File }
	roundTrip(t, map[string]fs{"two": {[]protocol.File{{Path: "/out/a.csv", Rows: 10, Description: "requests"}, {Path: "b.json", Rows: 1, Description: "summary"}}}},
		func(f fs) *exporterv1.FinishResponse { return &exporterv1.FinishResponse{Files: toFiles(f.F)} },
		func(r *exporterv1.FinishResponse) fs { return fs{fromFiles(r.GetFiles())} })
}

// The Go enums are converted by number, so they must number what the
// proto enums number, and name the same things.
func TestEnumNumbering(t *testing.T) {
	t.Parallel()
	options := map[protocol.OptionType]pluginv1.OptionType{
		protocol.OptionUnspecified: pluginv1.OptionType_OPTION_TYPE_UNSPECIFIED,
		protocol.OptionString:      pluginv1.OptionType_OPTION_TYPE_STRING,
		protocol.OptionInt:         pluginv1.OptionType_OPTION_TYPE_INT,
		protocol.OptionFloat:       pluginv1.OptionType_OPTION_TYPE_FLOAT,
		protocol.OptionBool:        pluginv1.OptionType_OPTION_TYPE_BOOL,
		protocol.OptionEnum:        pluginv1.OptionType_OPTION_TYPE_ENUM,
		protocol.OptionDuration:    pluginv1.OptionType_OPTION_TYPE_DURATION,
	}
	if len(options) != len(pluginv1.OptionType_name) {
		t.Errorf("the proto has %d option types, the Go protocol %d", len(pluginv1.OptionType_name), len(options))
	}
	for g, p := range options {
		if int32(g) != int32(p) {
			t.Errorf("protocol.OptionType %v = %d, proto %v = %d", g, g, p, p)
		}
	}
	phases := map[protocol.Phase][2]int32{
		0:                {int32(workloadv1.Phase_PHASE_UNSPECIFIED), int32(exporterv1.Phase_PHASE_UNSPECIFIED)},
		protocol.Warmup:  {int32(workloadv1.Phase_PHASE_WARMUP), int32(exporterv1.Phase_PHASE_WARMUP)},
		protocol.Measure: {int32(workloadv1.Phase_PHASE_MEASURE), int32(exporterv1.Phase_PHASE_MEASURE)},
	}
	if len(phases) != len(workloadv1.Phase_name) || len(phases) != len(exporterv1.Phase_name) {
		t.Errorf("the protos have %d and %d phases, the Go protocol %d", len(workloadv1.Phase_name), len(exporterv1.Phase_name), len(phases))
	}
	for g, p := range phases {
		if int32(g) != p[0] || int32(g) != p[1] {
			t.Errorf("protocol.Phase %v = %d, workload proto %d, exporter proto %d", g, g, p[0], p[1])
		}
	}
}

// max_tokens is int32 on the wire: a value out of its range must stay
// out of range (and be rejected), never wrap around into a valid one.
func TestMaxTokensStaysOutOfRange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want int
	}{
		{-5, -5},
		{0, 0},
		{1 << 24, 1 << 24},
		{math.MaxInt32, math.MaxInt32},
		{math.MaxInt32 + 1, math.MaxInt32},
		{math.MinInt32, math.MinInt32},
		{math.MinInt32 - 1, math.MinInt32},
	}
	if strconv.IntSize == 64 {
		tests = append(tests,
			struct{ in, want int }{int(int64(1)<<32 + 5), math.MaxInt32}, // would wrap to 5
			struct{ in, want int }{int(-(int64(1) << 32) + 5), math.MinInt32},
		)
	}
	for _, tc := range tests {
		if got := int(clampInt32(tc.in)); got != tc.want {
			t.Errorf("clampInt32(%d) = %d, want %d", tc.in, got, tc.want)
		}
		r := protocol.Request{ID: "q", MaxTokens: tc.in, Messages: []protocol.Message{{Role: "user", Content: []protocol.Segment{{Text: "x"}}}}}
		back := fromRequest(toRequest(&r))
		if back.MaxTokens != tc.want {
			t.Errorf("MaxTokens %d came back as %d, want %d", tc.in, back.MaxTokens, tc.want)
		}
		// What was invalid before the wire is invalid after it.
		valid := func(n int) bool { return n >= 1 && n <= protocol.DefaultLimits.MaxTokens }
		if valid(tc.in) != valid(back.MaxTokens) {
			t.Errorf("MaxTokens %d (valid: %v) came back as %d (valid: %v)", tc.in, valid(tc.in), back.MaxTokens, valid(back.MaxTokens))
		}
	}
}
