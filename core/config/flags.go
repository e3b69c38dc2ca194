package config

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// flagValue is a pflag.Value that parses with the option's own rules, so a
// bad flag value gets the same message as a bad file or env value.
type flagValue struct {
	o *Option
	v any
}

func (f *flagValue) String() string { return Format(f.v) }

func (f *flagValue) Set(s string) error {
	v, err := f.o.Parse(s)
	if err != nil {
		return err
	}
	f.v = v
	return nil
}

func (f *flagValue) Type() string {
	switch f.o.Type {
	case protocol.OptionInt:
		return "int"
	case protocol.OptionFloat:
		return "float"
	case protocol.OptionBool:
		return "bool"
	case protocol.OptionDuration:
		return "duration"
	}
	return "string"
}

// RegisterFlags adds one flag per option (all of them, or those keep
// accepts) to fs. The flag's default is the option's default.
func (r *Registry) RegisterFlags(fs *pflag.FlagSet, keep func(*Option) bool) {
	for _, o := range r.opts {
		if keep != nil && !keep(o) {
			continue
		}
		if fs.Lookup(o.Flag) != nil {
			continue
		}
		help := o.Help
		if len(o.Enum) > 0 {
			help += " One of: " + strings.Join(o.Enum, ", ") + "."
		}
		help += " [env " + o.Env + "]"
		f := fs.VarPF(&flagValue{o: o, v: o.Default}, o.Flag, o.Short, help)
		if o.Type == protocol.OptionBool {
			f.NoOptDefVal = "true"
		}
		f.Hidden = o.Hidden
	}
}

// flagOption returns the option behind a flag registered by RegisterFlags.
func flagOption(f *pflag.Flag) (*Option, any, bool) {
	fv, ok := f.Value.(*flagValue)
	if !ok {
		return nil, nil, false
	}
	return fv.o, fv.v, true
}

// IsBoolFlag lets a boolean option be given without a value (--json).
func (f *flagValue) IsBoolFlag() bool { return f.o.Type == protocol.OptionBool }
