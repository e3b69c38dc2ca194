package ui

import (
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// FieldsOf turns options into form fields, pre-filled with their
// current values (default, file, environment or flag).
func FieldsOf(opts []*config.Option, v *config.Values) []Field {
	var out []Field
	for _, o := range opts {
		f := Field{
			Key: o.Key, Flag: "--" + o.Flag, Label: o.Label, Help: o.Help, Enum: o.Enum,
			Value: config.Format(v.Get(o.Key)), Group: o.Group, Advanced: o.Advanced,
			Required: o.Key == config.KeyEngineURL,
			Validate: func(s string) error { return config.CheckAnswer(o, s) },
		}
		if f.Label == "" {
			f.Label = o.Flag
		}
		if f.Group == "" {
			f.Group = "Workload: " + o.Owner
			if o.Owner == "" {
				f.Group = config.GeneralGroup
			}
		}
		switch o.Type {
		case protocol.OptionInt:
			f.Kind = KindInt
		case protocol.OptionFloat:
			f.Kind = KindFloat
		case protocol.OptionBool:
			f.Kind = KindBool
		case protocol.OptionEnum:
			f.Kind = KindEnum
		default:
			f.Kind = KindString
		}
		if len(o.Enum) > 0 {
			f.Kind = KindEnum
		}
		out = append(out, f)
	}
	return out
}
