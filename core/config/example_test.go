package config_test

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
)

func Example() {
	reg := config.NewRegistry()
	reg.Add(config.Option{Key: "seed", Type: protocol.OptionInt, Default: int64(42)})
	reg.AddPlugin("long-doc-qa", "ldqa", []protocol.OptionSpec{
		{Name: "document-length", Type: protocol.OptionInt, Default: option.Value(10000)},
	})
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	reg.RegisterFlags(fs, nil)
	fs.Parse([]string{"--seed", "7"})

	v, err := reg.Load(config.Sources{Flags: fs, Environ: []string{"LMBENCH_LDQA_DOCUMENT_LENGTH=2000"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(v.Int("seed"), v.Origin("seed"))
	fmt.Println(v.Int("ldqa_document_length"), v.Origin("ldqa_document_length"))
	// Output:
	// 7 --seed
	// 2000 LMBENCH_LDQA_DOCUMENT_LENGTH
}
