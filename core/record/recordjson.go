package record

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"

	"github.com/lmbench/lmbench/core/internal/jsonenc"
)

// A request line's record is a JSON object whose keys are recordFields,
// in that order (journal version 2, docs/results-schema.md). The one
// table both writes (AppendJSON) and reads (decodeRecord) the record, so
// the two cannot drift apart, and a field added to Record needs one line
// here.
var recordFields = []recordField{
	stringField("run_id", func(r *Record) *string { return &r.RunID }),
	stringField("workload", func(r *Record) *string { return &r.Workload }),
	phaseField("phase"),
	stringField("request_id", func(r *Record) *string { return &r.RequestID }),
	tagsField("tags"),
	boolField("success", func(r *Record) *bool { return &r.Success }),
	stringField("error", func(r *Record) *string { return &r.Error }),
	floatField("ttft_s", func(r *Record) *float64 { return &r.TTFT }),
	floatField("latency_s", func(r *Record) *float64 { return &r.Latency }),
	floatField("decode_speed", func(r *Record) *float64 { return &r.DecodeSpeed }),
	floatField("itl_s", func(r *Record) *float64 { return &r.ITL }),
	intField("input_tokens", func(r *Record) *int64 { return &r.InputTokens }),
	intField("output_tokens", func(r *Record) *int64 { return &r.OutputTokens }),
	intField("cached_tokens", func(r *Record) *int64 { return &r.CachedTokens }),
	timeField("scheduled_unix_ns", func(r *Record) *time.Time { return &r.Scheduled }),
	boolField("explicit_schedule", func(r *Record) *bool { return &r.ExplicitSchedule }),
	timeField("submit_unix_ns", func(r *Record) *time.Time { return &r.Submit }),
	timeField("first_token_unix_ns", func(r *Record) *time.Time { return &r.FirstToken }),
	timeField("finish_unix_ns", func(r *Record) *time.Time { return &r.Finish }),
	intField("seq", func(r *Record) *int64 { return &r.Seq }),
	intField("chunks", func(r *Record) *int64 { return &r.Chunks }),
	intField("usage_output_tokens", func(r *Record) *int64 { return &r.UsageOutputTokens }),
	offsetsField("chunk_offsets_us"),
	boolField("chunk_offsets_truncated", func(r *Record) *bool { return &r.ChunkOffsetsTruncated }),
	stringField("finish_reason", func(r *Record) *string { return &r.FinishReason }),
	stringField("response_id", func(r *Record) *string { return &r.ResponseID }),
	stringField("response_model", func(r *Record) *string { return &r.ResponseModel }),
	// Absent when none was stated, so the journals of workloads that
	// state none keep the bytes they had before the field existed.
	positiveIntField("stated_prompt_tokens", func(r *Record) *int64 { return &r.StatedPromptTokens }),
	// Absent unless the run records outputs (--record-outputs) and the
	// answer had text.
	optionalStringField("output_text", func(r *Record) *string { return &r.OutputText }),
	// Absent unless the run asked for log-probabilities (--record-logprobs)
	// and the engine returned them; their JSON as a string.
	optionalStringField("output_logprobs", func(r *Record) *string { return &r.OutputLogprobs }),
	// Absent unless the workload scored the answer. A live journal keeps
	// scores on "score" lines, written once the workload has judged the
	// answer, and the reader puts them here; a journal rewritten from
	// records (a fallback, a merge) has them in the record.
	scoresField("scores"),
	optionalStringField("target_tier", func(r *Record) *string { return &r.TargetTier }),
}

// recordField is one key of the record: how its value is written, and
// how it is read back. Reading goes through encoding/json into a struct
// made of every field's type (recordJSON), at the speed of a declared
// struct; set moves the value into the record. A key that is absent (a
// journal written before its field existed) reads as its zero value, a
// float as NaN.
type recordField struct {
	key   string
	omit  func(r *Record) bool // the key is left out; nil: always written
	write func(b []byte, r *Record) []byte
	as    reflect.Type // what the value is decoded into
	set   func(v reflect.Value, r *Record) error
}

// recordJSON is the struct the JSON record is decoded into: field i is
// recordFields[i]'s value, under its key.
var recordJSON = func() reflect.Type {
	fields := make([]reflect.StructField, len(recordFields))
	for i, f := range recordFields {
		fields[i] = reflect.StructField{Name: "F" + strconv.Itoa(i), Type: f.as, Tag: reflect.StructTag(`json:"` + f.key + `"`)}
	}
	return reflect.StructOf(fields)
}()

// AppendJSON appends r as the journal's JSON object (the "record" of a
// request line), with fields in a fixed order.
func AppendJSON(b []byte, r *Record) []byte {
	b = append(b, '{')
	first := true
	for i := range recordFields {
		f := &recordFields[i]
		if f.omit != nil && f.omit(r) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, f.key...)
		b = append(b, `":`...)
		b = f.write(b, r)
	}
	return append(b, '}')
}

// decodeRecord reads a request line's record of the journal's version.
func decodeRecord(version int, raw json.RawMessage) (Record, error) {
	if version == 1 {
		return decodeRecordV1(raw)
	}
	v := reflect.New(recordJSON)
	if err := json.Unmarshal(raw, v.Interface()); err != nil {
		return Record{}, fmt.Errorf("request record: %v", err)
	}
	var (
		r     Record
		first error
	)
	// Every field is set before an error is returned, so the error can
	// name the request.
	for i := range recordFields {
		if err := recordFields[i].set(v.Elem().Field(i), &r); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return Record{}, fmt.Errorf("request record %q: %v", r.RequestID, first)
	}
	return r, nil
}

func stringField(key string, p func(*Record) *string) recordField {
	return recordField{key: key, as: reflect.TypeFor[string](),
		write: func(b []byte, r *Record) []byte { return jsonenc.AppendString(b, *p(r)) },
		set:   func(v reflect.Value, r *Record) error { *p(r) = v.String(); return nil }}
}

func boolField(key string, p func(*Record) *bool) recordField {
	return recordField{key: key, as: reflect.TypeFor[bool](),
		write: func(b []byte, r *Record) []byte { return strconv.AppendBool(b, *p(r)) },
		set:   func(v reflect.Value, r *Record) error { *p(r) = v.Bool(); return nil }}
}

func intField(key string, p func(*Record) *int64) recordField {
	return recordField{key: key, as: reflect.TypeFor[int64](),
		write: func(b []byte, r *Record) []byte { return strconv.AppendInt(b, *p(r), 10) },
		set:   func(v reflect.Value, r *Record) error { *p(r) = v.Int(); return nil }}
}

// positiveIntField is an int field whose key is written only when its
// value is above zero.
func positiveIntField(key string, p func(*Record) *int64) recordField {
	f := intField(key, p)
	f.omit = func(r *Record) bool { return *p(r) <= 0 }
	return f
}

// optionalStringField is a string field whose key is written only when
// its value is not empty.
func optionalStringField(key string, p func(*Record) *string) recordField {
	f := stringField(key, p)
	f.omit = func(r *Record) bool { return *p(r) == "" }
	return f
}

// scoresField is the scores by name, keys sorted; left out when none.
func scoresField(key string) recordField {
	return recordField{key: key, as: reflect.TypeFor[map[string]float64](),
		omit:  func(r *Record) bool { return len(r.Scores) == 0 },
		write: func(b []byte, r *Record) []byte { return appendScores(b, r.Scores) },
		set: func(v reflect.Value, r *Record) error {
			if v.Len() > 0 {
				r.Scores = v.Interface().(map[string]float64)
			}
			return nil
		}}
}

// appendScores writes scores as a JSON object with sorted keys (a value
// JSON cannot hold as null).
func appendScores(b []byte, scores map[string]float64) []byte {
	b = append(b, '{')
	for i, k := range sortedKeys(scores) {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendString(b, k)
		b = append(b, ':')
		if v := scores[k]; !math.IsNaN(v) && !math.IsInf(v, 0) {
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		} else {
			b = append(b, "null"...)
		}
	}
	return append(b, '}')
}

// floatField writes a float JSON cannot hold (NaN, ±Inf) as null, and
// reads null, or an absent key, as NaN.
func floatField(key string, p func(*Record) *float64) recordField {
	return recordField{key: key, as: reflect.TypeFor[*float64](),
		write: func(b []byte, r *Record) []byte {
			if v := *p(r); !math.IsNaN(v) && !math.IsInf(v, 0) {
				return strconv.AppendFloat(b, v, 'g', -1, 64)
			}
			return append(b, "null"...)
		},
		set: func(v reflect.Value, r *Record) error {
			*p(r) = math.NaN()
			if !v.IsNil() {
				*p(r) = v.Elem().Float()
			}
			return nil
		}}
}

// timeField is a time as Unix nanoseconds, 0 for the zero time.
func timeField(key string, p func(*Record) *time.Time) recordField {
	return recordField{key: key, as: reflect.TypeFor[int64](),
		write: func(b []byte, r *Record) []byte { return strconv.AppendInt(b, unixNs(*p(r)), 10) },
		set:   func(v reflect.Value, r *Record) error { *p(r) = fromUnixNs(v.Int()); return nil }}
}

// phaseField is the phase by name; any other name is an error.
func phaseField(key string) recordField {
	return recordField{key: key, as: reflect.TypeFor[string](),
		write: func(b []byte, r *Record) []byte { return jsonenc.AppendString(b, r.Phase.String()) },
		set: func(v reflect.Value, r *Record) error {
			switch name := v.String(); name {
			case Warmup.String():
				r.Phase = Warmup
			case Measure.String():
				r.Phase = Measure
			default:
				return fmt.Errorf("phase %q, want warmup or measure", name)
			}
			return nil
		}}
}

// tagsField is the tags as an object with sorted keys.
func tagsField(key string) recordField {
	return recordField{key: key, as: reflect.TypeFor[map[string]string](),
		write: func(b []byte, r *Record) []byte {
			b = append(b, '{')
			for i, k := range sortedKeys(r.Tags) {
				if i > 0 {
					b = append(b, ',')
				}
				b = jsonenc.AppendString(b, k)
				b = append(b, ':')
				b = jsonenc.AppendString(b, r.Tags[k])
			}
			return append(b, '}')
		},
		set: func(v reflect.Value, r *Record) error { r.Tags = v.Interface().(map[string]string); return nil }}
}

// offsetsField is the chunk offsets as an array; an empty one reads back
// as none (nil), like an absent one.
func offsetsField(key string) recordField {
	return recordField{key: key, as: reflect.TypeFor[[]int64](),
		write: func(b []byte, r *Record) []byte {
			b = append(b, '[')
			for i, o := range r.ChunkOffsetsUs {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, o, 10)
			}
			return append(b, ']')
		},
		set: func(v reflect.Value, r *Record) error {
			if v.Len() > 0 {
				r.ChunkOffsetsUs = v.Interface().([]int64)
			}
			return nil
		}}
}
