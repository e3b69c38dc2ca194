package wire

import (
	"time"

	exporterv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/exporter/v1"
	pluginv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/plugin/v1"
	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// The conversions between the protocol's Go types and the generated
// messages, in both directions: toX builds the wire message, fromX reads
// it. Every field of every message goes through here and nowhere else.

// --- shared ---

func toHost(h protocol.HostInfo) *pluginv1.HostInfo {
	return &pluginv1.HostInfo{Version: h.Version, ProtocolMinor: uint32(h.ProtocolMinor), Capabilities: h.Capabilities}
}

func fromHost(h *pluginv1.HostInfo) protocol.HostInfo {
	return protocol.HostInfo{Version: h.GetVersion(), ProtocolMinor: int(h.GetProtocolMinor()), Capabilities: h.GetCapabilities()}
}

func toInfo(i protocol.PluginInfo) *pluginv1.PluginInfo {
	return &pluginv1.PluginInfo{
		Kind: i.Kind, Name: i.Name, Version: i.Version, Summary: i.Summary, Prefix: i.Prefix,
		ProtocolMinor: uint32(i.ProtocolMinor), Capabilities: i.Capabilities, SdkVersion: i.SDKVersion,
	}
}

func fromInfo(i *pluginv1.PluginInfo) protocol.PluginInfo {
	return protocol.PluginInfo{
		Kind: i.GetKind(), Name: i.GetName(), Version: i.GetVersion(), Summary: i.GetSummary(), Prefix: i.GetPrefix(),
		ProtocolMinor: int(i.GetProtocolMinor()), Capabilities: i.GetCapabilities(), SDKVersion: i.GetSdkVersion(),
	}
}

// toValue converts an option value; a type an option cannot hold is nil.
func toValue(x any) *pluginv1.OptionValue {
	switch v := x.(type) {
	case string:
		return &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_StringValue{StringValue: v}}
	case bool:
		return &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_BoolValue{BoolValue: v}}
	case int64:
		return &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_IntValue{IntValue: v}}
	case int:
		return &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_IntValue{IntValue: int64(v)}}
	case time.Duration:
		return &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_IntValue{IntValue: int64(v)}}
	case float64:
		return &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_FloatValue{FloatValue: v}}
	}
	return nil
}

func fromValue(v *pluginv1.OptionValue) any {
	switch k := v.GetKind().(type) {
	case *pluginv1.OptionValue_StringValue:
		return k.StringValue
	case *pluginv1.OptionValue_IntValue:
		return k.IntValue
	case *pluginv1.OptionValue_FloatValue:
		return k.FloatValue
	case *pluginv1.OptionValue_BoolValue:
		return k.BoolValue
	}
	return nil
}

func toValues(m protocol.Values) map[string]*pluginv1.OptionValue {
	if m == nil {
		return nil
	}
	out := make(map[string]*pluginv1.OptionValue, len(m))
	for k, v := range m {
		if pv := toValue(v); pv != nil {
			out[k] = pv
		}
	}
	return out
}

func fromValues(m map[string]*pluginv1.OptionValue) protocol.Values {
	if m == nil {
		return nil
	}
	out := make(protocol.Values, len(m))
	for k, v := range m {
		out[k] = fromValue(v)
	}
	return out
}

func toSpecs(specs []protocol.OptionSpec) []*pluginv1.OptionSpec {
	out := make([]*pluginv1.OptionSpec, len(specs))
	for i, s := range specs {
		out[i] = &pluginv1.OptionSpec{
			Name: s.Name, Type: pluginv1.OptionType(s.Type), Default: toValue(s.Default), Help: s.Help,
			Min: s.Min, Max: s.Max, EnumValues: s.Enum, Group: s.Group, Advanced: s.Advanced, Label: s.Label,
		}
	}
	return out
}

func fromSpecs(specs []*pluginv1.OptionSpec) []protocol.OptionSpec {
	if len(specs) == 0 {
		return nil
	}
	out := make([]protocol.OptionSpec, len(specs))
	for i, s := range specs {
		out[i] = protocol.OptionSpec{
			Name: s.GetName(), Type: protocol.OptionType(s.GetType()), Default: fromValue(s.GetDefault()), Help: s.GetHelp(),
			Min: s.Min, Max: s.Max, Enum: s.GetEnumValues(), Group: s.GetGroup(), Advanced: s.GetAdvanced(), Label: s.GetLabel(),
		}
	}
	return out
}

func toFieldErrors(errs []protocol.FieldError) []*pluginv1.FieldError {
	out := make([]*pluginv1.FieldError, len(errs))
	for i, e := range errs {
		out[i] = &pluginv1.FieldError{Option: e.Option, Message: e.Message}
	}
	return out
}

func fromFieldErrors(errs []*pluginv1.FieldError) []protocol.FieldError {
	if len(errs) == 0 {
		return nil
	}
	out := make([]protocol.FieldError, len(errs))
	for i, e := range errs {
		out[i] = protocol.FieldError{Option: e.GetOption(), Message: e.GetMessage()}
	}
	return out
}

// --- workload ---

func toWorkloadDescription(d protocol.WorkloadDescription) *workloadv1.DescribeResponse {
	return &workloadv1.DescribeResponse{Info: toInfo(d.Info), Options: toSpecs(d.Options), TagKeys: d.TagKeys, WantsResponseText: d.WantsResponseText, ScoreKeys: d.ScoreKeys,
		Deterministic: d.Deterministic}
}

func fromWorkloadDescription(d *workloadv1.DescribeResponse) protocol.WorkloadDescription {
	return protocol.WorkloadDescription{Info: fromInfo(d.GetInfo()), Options: fromSpecs(d.GetOptions()), TagKeys: d.GetTagKeys(), WantsResponseText: d.GetWantsResponseText(), ScoreKeys: d.GetScoreKeys(),
		Deterministic: d.GetDeterministic()}
}

func toWorkloadConfig(c protocol.WorkloadConfig) *workloadv1.ConfigureRequest {
	return &workloadv1.ConfigureRequest{Options: toValues(c.Options), Common: &workloadv1.Common{
		Seed: c.Common.Seed, Model: c.Common.Model, KvCacheVolumeGb: c.Common.KVCacheVolumeGB,
		TokensPerGb: c.Common.TokensPerGB, CompletionsMode: c.Common.CompletionsMode,
		ShardIndex: int32(c.Common.Shard.Index), ShardCount: int32(c.Common.Shard.Count),
	}, Tokenizer: c.Tokens != nil, CheckOnly: c.CheckOnly}
}

func fromWorkloadConfig(r *workloadv1.ConfigureRequest) protocol.WorkloadConfig {
	c := r.GetCommon()
	return protocol.WorkloadConfig{Options: fromValues(r.GetOptions()), Common: protocol.Common{
		Seed: c.GetSeed(), Model: c.GetModel(), KVCacheVolumeGB: c.GetKvCacheVolumeGb(),
		TokensPerGB: c.GetTokensPerGb(), CompletionsMode: c.GetCompletionsMode(),
		Shard: protocol.Shard{Index: int(c.GetShardIndex()), Count: int(c.GetShardCount())},
	}, CheckOnly: r.GetCheckOnly()}
}

func toConfigured(c protocol.Configured) *workloadv1.ConfigureResponse {
	out := &workloadv1.ConfigureResponse{Resolved: toValues(c.Resolved), Errors: toFieldErrors(c.Errors),
		PlannedRequests: c.PlannedRequests, Title: c.Title, RequestedRate: c.RequestedRate}
	for _, f := range c.Banner {
		out.Banner = append(out.Banner, &pluginv1.Field{Label: f.Label, Value: f.Value})
	}
	return out
}

func fromConfigured(r *workloadv1.ConfigureResponse) protocol.Configured {
	out := protocol.Configured{Resolved: fromValues(r.GetResolved()), Errors: fromFieldErrors(r.GetErrors()),
		PlannedRequests: r.GetPlannedRequests(), Title: r.GetTitle(), RequestedRate: r.GetRequestedRate()}
	for _, f := range r.GetBanner() {
		out.Banner = append(out.Banner, protocol.Field{Label: f.GetLabel(), Value: f.GetValue()})
	}
	return out
}

func toStepRequest(r protocol.StepRequest) *workloadv1.StepRequest {
	return &workloadv1.StepRequest{Phase: workloadv1.Phase(r.Phase), OffsetNs: int64(r.Offset), InFlight: uint32(max(r.InFlight, 0)),
		Finished: toResults(r.Finished)}
}

func fromStepRequest(r *workloadv1.StepRequest) protocol.StepRequest {
	return protocol.StepRequest{Phase: protocol.Phase(r.GetPhase()), Offset: time.Duration(r.GetOffsetNs()), InFlight: int(r.GetInFlight()),
		Finished: fromResults(r.GetFinished())}
}

func toSegments(segs []protocol.Segment) []*workloadv1.Segment {
	if segs == nil {
		return nil
	}
	out := make([]*workloadv1.Segment, len(segs))
	for i, s := range segs {
		if s.Ref != "" {
			out[i] = &workloadv1.Segment{Kind: &workloadv1.Segment_ContentId{ContentId: s.Ref}}
		} else {
			out[i] = &workloadv1.Segment{Kind: &workloadv1.Segment_Text{Text: s.Text}}
		}
	}
	return out
}

func fromSegments(segs []*workloadv1.Segment) []protocol.Segment {
	if segs == nil {
		return nil
	}
	out := make([]protocol.Segment, len(segs))
	for i, s := range segs {
		switch k := s.GetKind().(type) {
		case *workloadv1.Segment_ContentId:
			out[i] = protocol.Segment{Ref: k.ContentId}
		case *workloadv1.Segment_Text:
			out[i] = protocol.Segment{Text: k.Text}
		}
	}
	return out
}

func toToolCalls(tcs []protocol.ToolCall) []*workloadv1.ToolCall {
	if len(tcs) == 0 {
		return nil
	}
	out := make([]*workloadv1.ToolCall, len(tcs))
	for i, tc := range tcs {
		out[i] = &workloadv1.ToolCall{Id: tc.ID, Name: tc.Name, Arguments: tc.Arguments}
	}
	return out
}

func fromToolCalls(tcs []*workloadv1.ToolCall) []protocol.ToolCall {
	if len(tcs) == 0 {
		return nil
	}
	out := make([]protocol.ToolCall, len(tcs))
	for i, tc := range tcs {
		out[i] = protocol.ToolCall{ID: tc.GetId(), Name: tc.GetName(), Arguments: tc.GetArguments()}
	}
	return out
}

func toRequest(r *protocol.Request) *workloadv1.Request {
	pr := &workloadv1.Request{Id: r.ID, MaxTokens: clampInt32(r.MaxTokens), Tags: r.Tags, MaxInFlight: uint32(min(max(r.MaxInFlight, 0), 1<<31-1)),
		PromptTokens: uint32(min(max(r.PromptTokens, 0), 1<<31-1)), IgnoreEos: r.IgnoreEOS}
	if r.HasScheduled {
		ns := int64(r.Scheduled)
		pr.ScheduledNs = &ns
	}
	if r.HasExpectedCached {
		n := uint32(min(max(r.ExpectedCachedTokens, 0), 1<<32-1))
		pr.ExpectedCachedTokens = &n
	}
	pr.TargetTier = r.TargetTier
	for _, t := range r.Tools {
		pr.Tools = append(pr.Tools, &workloadv1.Tool{Name: t.Name, Description: t.Description, ParametersJson: t.Parameters})
	}
	if r.Completion {
		pr.Body = &workloadv1.Request_Completion{Completion: &workloadv1.Completion{Prompt: toSegments(r.Prompt)}}
		return pr
	}
	msgs := make([]*workloadv1.Message, len(r.Messages))
	for i, m := range r.Messages {
		msgs[i] = &workloadv1.Message{Role: m.Role, Content: toSegments(m.Content), ToolCalls: toToolCalls(m.ToolCalls), ToolCallId: m.ToolCallID}
	}
	pr.Body = &workloadv1.Request_Chat{Chat: &workloadv1.Chat{Messages: msgs}}
	return pr
}

// clampInt32 keeps an out-of-range max_tokens out of range on the wire
// (a silent wrap-around could turn -5 into a valid value, or 2^32+5 into 5).
func clampInt32(n int) int32 {
	const lo, hi = -1 << 31, 1<<31 - 1
	return int32(min(max(n, lo), hi))
}

func fromRequest(r *workloadv1.Request) protocol.Request {
	out := protocol.Request{ID: r.GetId(), MaxTokens: int(r.GetMaxTokens()), Tags: r.GetTags(), MaxInFlight: int(r.GetMaxInFlight()),
		PromptTokens: int(r.GetPromptTokens()), IgnoreEOS: r.GetIgnoreEos()}
	if r.ScheduledNs != nil {
		out.Scheduled, out.HasScheduled = time.Duration(r.GetScheduledNs()), true
	}
	if r.ExpectedCachedTokens != nil {
		out.ExpectedCachedTokens, out.HasExpectedCached = int(r.GetExpectedCachedTokens()), true
	}
	out.TargetTier = r.GetTargetTier()
	for _, t := range r.GetTools() {
		out.Tools = append(out.Tools, protocol.Tool{Name: t.GetName(), Description: t.GetDescription(), Parameters: t.GetParametersJson()})
	}
	switch b := r.GetBody().(type) {
	case *workloadv1.Request_Completion:
		out.Completion = true
		out.Prompt = fromSegments(b.Completion.GetPrompt())
	case *workloadv1.Request_Chat:
		msgs := b.Chat.GetMessages()
		out.Messages = make([]protocol.Message, len(msgs))
		for i, m := range msgs {
			out.Messages[i] = protocol.Message{Role: m.GetRole(), Content: fromSegments(m.GetContent()),
				ToolCalls: fromToolCalls(m.GetToolCalls()), ToolCallID: m.GetToolCallId()}
		}
	}
	return out
}

func toStepResponse(r protocol.StepResponse) *workloadv1.StepResponse {
	out := &workloadv1.StepResponse{Released: r.Released, Scores: toScores(r.Scores)}
	if len(r.Contents) > 0 {
		out.Contents = make([]*workloadv1.Content, len(r.Contents))
		for i, c := range r.Contents {
			out.Contents[i] = &workloadv1.Content{Id: c.ID, Text: c.Text}
		}
	}
	if len(r.Requests) > 0 {
		out.Requests = make([]*workloadv1.Request, len(r.Requests))
		for i := range r.Requests {
			out.Requests[i] = toRequest(&r.Requests[i])
		}
	}
	switch r.Next.Kind {
	case protocol.NextWakeAt:
		out.Next = &workloadv1.StepResponse_WakeAtNs{WakeAtNs: int64(r.Next.At)}
	case protocol.NextWakeAtOrFinish:
		out.Next = &workloadv1.StepResponse_WakeAtOrOnFinishNs{WakeAtOrOnFinishNs: int64(r.Next.At)}
	case protocol.NextWaitForFinish:
		out.Next = &workloadv1.StepResponse_WaitForFinish{WaitForFinish: true}
	case protocol.NextDone:
		out.Next = &workloadv1.StepResponse_Done{Done: true}
	case protocol.NextWaitForInFlightBelow:
		out.Next = &workloadv1.StepResponse_WaitForInFlightBelow{WaitForInFlightBelow: uint32(min(max(r.Next.InFlightBelow, 0), 1<<31-1))}
	}
	return out
}

func fromStepResponse(r *workloadv1.StepResponse) protocol.StepResponse {
	out := protocol.StepResponse{Released: r.GetReleased(), Scores: fromScores(r.GetScores())}
	if cs := r.GetContents(); len(cs) > 0 {
		out.Contents = make([]protocol.Content, len(cs))
		for i, c := range cs {
			out.Contents[i] = protocol.Content{ID: c.GetId(), Text: c.GetText()}
		}
	}
	if rs := r.GetRequests(); len(rs) > 0 {
		out.Requests = make([]protocol.Request, len(rs))
		for i, pr := range rs {
			out.Requests[i] = fromRequest(pr)
		}
	}
	switch n := r.GetNext().(type) {
	case *workloadv1.StepResponse_WakeAtNs:
		out.Next = protocol.Next{Kind: protocol.NextWakeAt, At: time.Duration(n.WakeAtNs)}
	case *workloadv1.StepResponse_WakeAtOrOnFinishNs:
		out.Next = protocol.Next{Kind: protocol.NextWakeAtOrFinish, At: time.Duration(n.WakeAtOrOnFinishNs)}
	case *workloadv1.StepResponse_WaitForFinish:
		out.Next = protocol.Next{Kind: protocol.NextWaitForFinish}
	case *workloadv1.StepResponse_Done:
		out.Next = protocol.Next{Kind: protocol.NextDone}
	case *workloadv1.StepResponse_WaitForInFlightBelow:
		out.Next = protocol.Next{Kind: protocol.NextWaitForInFlightBelow, InFlightBelow: int(n.WaitForInFlightBelow)}
	}
	return out
}

// toScores converts scores to their protobuf form (nil for none).
func toScores(ss []protocol.Score) []*workloadv1.Score {
	if len(ss) == 0 {
		return nil
	}
	out := make([]*workloadv1.Score, len(ss))
	for i, s := range ss {
		out[i] = &workloadv1.Score{RequestId: s.RequestID, Phase: workloadv1.Phase(s.Phase), Values: s.Values}
	}
	return out
}

// fromScores converts scores from their protobuf form (nil for none).
func fromScores(ss []*workloadv1.Score) []protocol.Score {
	if len(ss) == 0 {
		return nil
	}
	out := make([]protocol.Score, len(ss))
	for i, s := range ss {
		out[i] = protocol.Score{RequestID: s.GetRequestId(), Phase: protocol.Phase(s.GetPhase()), Values: s.GetValues()}
	}
	return out
}

func toResults(rs []protocol.Result) []*workloadv1.Result {
	if len(rs) == 0 {
		return nil
	}
	out := make([]*workloadv1.Result, len(rs))
	for i, r := range rs {
		out[i] = &workloadv1.Result{
			Id: r.ID, Phase: workloadv1.Phase(r.Phase), Success: r.Success, Error: r.Error, Text: r.Text,
			TtftS: r.TTFT, LatencyS: r.Latency, InputTokens: int64(r.InputTokens), OutputTokens: int64(r.OutputTokens),
			FinishOffsetNs: int64(r.Finish), ToolCalls: toToolCalls(r.ToolCalls), CachedTokens: int64(r.CachedTokens),
		}
	}
	return out
}

func fromResults(rs []*workloadv1.Result) []protocol.Result {
	if len(rs) == 0 {
		return nil
	}
	out := make([]protocol.Result, len(rs))
	for i, r := range rs {
		out[i] = protocol.Result{
			ID: r.GetId(), Phase: protocol.Phase(r.GetPhase()), Success: r.GetSuccess(), Error: r.GetError(), Text: r.GetText(),
			TTFT: r.GetTtftS(), Latency: r.GetLatencyS(), InputTokens: int(r.GetInputTokens()), OutputTokens: int(r.GetOutputTokens()),
			Finish: time.Duration(r.GetFinishOffsetNs()), ToolCalls: fromToolCalls(r.GetToolCalls()), CachedTokens: int(r.GetCachedTokens()),
		}
	}
	return out
}

// --- exporter ---

func toExporterDescription(d protocol.ExporterDescription) *exporterv1.DescribeResponse {
	return &exporterv1.DescribeResponse{Info: toInfo(d.Info), Options: toSpecs(d.Options)}
}

func fromExporterDescription(d *exporterv1.DescribeResponse) protocol.ExporterDescription {
	return protocol.ExporterDescription{Info: fromInfo(d.GetInfo()), Options: fromSpecs(d.GetOptions())}
}

func unixNs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNs(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

func toRunMetadata(m protocol.RunMetadata) *exporterv1.RunMetadata {
	return &exporterv1.RunMetadata{
		RunId: m.RunID, Workload: m.Workload, Model: m.Model, OutputDir: m.OutputDir, LmbenchVersion: m.LMBenchVersion,
		TagKeys: m.TagKeys, ConfigJson: m.ConfigJSON, StartedUnixNs: unixNs(m.Started),
	}
}

func fromRunMetadata(m *exporterv1.RunMetadata) protocol.RunMetadata {
	return protocol.RunMetadata{
		RunID: m.GetRunId(), Workload: m.GetWorkload(), Model: m.GetModel(), OutputDir: m.GetOutputDir(),
		LMBenchVersion: m.GetLmbenchVersion(), TagKeys: m.GetTagKeys(), ConfigJSON: m.GetConfigJson(),
		Started: fromUnixNs(m.GetStartedUnixNs()),
	}
}

func toExporterConfig(c protocol.ExporterConfig) *exporterv1.ConfigureRequest {
	return &exporterv1.ConfigureRequest{Options: toValues(c.Options), Run: toRunMetadata(c.Run)}
}

func fromExporterConfig(r *exporterv1.ConfigureRequest) protocol.ExporterConfig {
	return protocol.ExporterConfig{Options: fromValues(r.GetOptions()), Run: fromRunMetadata(r.GetRun())}
}

func toExporterConfigured(c protocol.Configured) *exporterv1.ConfigureResponse {
	return &exporterv1.ConfigureResponse{Resolved: toValues(c.Resolved), Errors: toFieldErrors(c.Errors)}
}

func fromExporterConfigured(r *exporterv1.ConfigureResponse) protocol.Configured {
	return protocol.Configured{Resolved: fromValues(r.GetResolved()), Errors: fromFieldErrors(r.GetErrors())}
}

func toRecord(r *protocol.Record) *exporterv1.Record {
	return &exporterv1.Record{
		RunId: r.RunID, Workload: r.Workload, Phase: exporterv1.Phase(r.Phase), RequestId: r.RequestID, Tags: r.Tags,
		Success: r.Success, Error: r.Error, TtftS: r.TTFT, LatencyS: r.Latency, DecodeSpeed: r.DecodeSpeed, ItlS: r.ITL,
		InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, CachedTokens: r.CachedTokens,
		ScheduledUnixNs: unixNs(r.Scheduled), SubmitUnixNs: unixNs(r.Submit), FirstTokenUnixNs: unixNs(r.FirstToken),
		FinishUnixNs: unixNs(r.Finish), Seq: r.Seq,
		Chunks: r.Chunks, UsageOutputTokens: r.UsageOutputTokens, ChunkOffsetsUs: r.ChunkOffsetsUs,
		ChunkOffsetsTruncated: r.ChunkOffsetsTruncated, FinishReason: r.FinishReason, ResponseId: r.ResponseID,
		ResponseModel: r.ResponseModel, ExplicitSchedule: r.ExplicitSchedule, StatedPromptTokens: r.StatedPromptTokens,
		OutputText: r.OutputText, Scores: r.Scores, TargetTier: r.TargetTier, OutputLogprobs: r.OutputLogprobs,
	}
}

func fromRecord(r *exporterv1.Record) protocol.Record {
	return protocol.Record{
		RunID: r.GetRunId(), Workload: r.GetWorkload(), Phase: protocol.Phase(r.GetPhase()), RequestID: r.GetRequestId(),
		Tags: r.GetTags(), Success: r.GetSuccess(), Error: r.GetError(), TTFT: r.GetTtftS(), Latency: r.GetLatencyS(),
		DecodeSpeed: r.GetDecodeSpeed(), ITL: r.GetItlS(), InputTokens: r.GetInputTokens(), OutputTokens: r.GetOutputTokens(),
		CachedTokens: r.GetCachedTokens(), Scheduled: fromUnixNs(r.GetScheduledUnixNs()), Submit: fromUnixNs(r.GetSubmitUnixNs()),
		FirstToken: fromUnixNs(r.GetFirstTokenUnixNs()), Finish: fromUnixNs(r.GetFinishUnixNs()), Seq: r.GetSeq(),
		Chunks: r.GetChunks(), UsageOutputTokens: r.GetUsageOutputTokens(), ChunkOffsetsUs: nonEmpty(r.GetChunkOffsetsUs()),
		ChunkOffsetsTruncated: r.GetChunkOffsetsTruncated(), FinishReason: r.GetFinishReason(), ResponseID: r.GetResponseId(),
		ResponseModel: r.GetResponseModel(), ExplicitSchedule: r.GetExplicitSchedule(), StatedPromptTokens: r.GetStatedPromptTokens(),
		OutputText: r.GetOutputText(), Scores: r.GetScores(), TargetTier: r.GetTargetTier(), OutputLogprobs: r.GetOutputLogprobs(),
	}
}

// nonEmpty is s, or nil when it is empty: protobuf does not tell an empty
// list from none, so neither side sees a difference.
func nonEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func toSummary(s protocol.Summary) *exporterv1.Summary {
	return &exporterv1.Summary{RunId: s.RunID, SummaryJson: s.JSON, TotalRequests: s.Total, SuccessfulRequests: s.Successful,
		FailedRequests: s.Failed, ElapsedS: s.Elapsed, Interrupted: s.Interrupted}
}

func fromSummary(s *exporterv1.Summary) protocol.Summary {
	return protocol.Summary{RunID: s.GetRunId(), JSON: s.GetSummaryJson(), Total: s.GetTotalRequests(), Successful: s.GetSuccessfulRequests(),
		Failed: s.GetFailedRequests(), Elapsed: s.GetElapsedS(), Interrupted: s.GetInterrupted()}
}

func toFiles(fs []protocol.File) []*exporterv1.WrittenFile {
	out := make([]*exporterv1.WrittenFile, len(fs))
	for i, f := range fs {
		out[i] = &exporterv1.WrittenFile{Path: f.Path, Rows: f.Rows, Description: f.Description}
	}
	return out
}

func fromFiles(fs []*exporterv1.WrittenFile) []protocol.File {
	if len(fs) == 0 {
		return nil
	}
	out := make([]protocol.File, len(fs))
	for i, f := range fs {
		out[i] = protocol.File{Path: f.GetPath(), Rows: f.GetRows(), Description: f.GetDescription()}
	}
	return out
}
