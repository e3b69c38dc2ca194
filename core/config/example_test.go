package config_test

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/sdk/option"
	pluginv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/plugin/v1"
)

func Example() {
	reg := config.NewRegistry()
	reg.Add(config.Option{Key: "seed", Type: pluginv1.OptionType_OPTION_TYPE_INT, Default: int64(42)})
	reg.AddPlugin("long-doc-qa", "ldqa", []*pluginv1.OptionSpec{
		{Name: "document-length", Type: pluginv1.OptionType_OPTION_TYPE_INT, Default: option.Value(10000)},
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
