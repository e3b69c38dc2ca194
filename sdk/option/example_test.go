package option_test

import (
	"fmt"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Options is a plugin's options struct: its field values are the
// defaults, its tags the schema lmbench builds flags, config keys,
// environment variables and form fields from.
type Options struct {
	Requests int     `opt:"requests" help:"Requests to send." min:"1"`
	QPS      float64 `opt:"qps" label:"Requests per second" help:"Target rate." min:"0.001"`
	Order    string  `opt:"order" enum:"random,tile" help:"Request order."`
}

// Validate runs after the types and bounds are checked.
func (o Options) Validate() error {
	if o.Order == "tile" && o.Requests%2 != 0 {
		return option.Errorf("requests", "must be even with --order tile, got %d", o.Requests)
	}
	return nil
}

// Specs turns the struct into the schema a plugin describes itself with.
func ExampleSpecs() {
	specs, err := option.Specs(Options{Requests: 10, QPS: 2, Order: "random"})
	if err != nil {
		panic(err)
	}
	for _, s := range specs {
		fmt.Printf("%s %s default %v\n", s.Name, s.Type, s.Default)
	}
	// Output:
	// requests int default 10
	// qps float default 2
	// order enum default random
}

// Decode checks types, enums and bounds first, then calls Validate, and
// reports every problem together.
func ExampleDecode() {
	defaults := Options{Requests: 10, QPS: 2, Order: "random"}

	o, err := option.Decode(defaults, protocol.Values{"requests": int64(4), "order": "tile"})
	fmt.Println(o.Requests, o.QPS, o.Order, err)

	_, err = option.Decode(defaults, protocol.Values{"requests": int64(3), "order": "tile", "qps": 0.0})
	for _, fe := range option.Errors(err) {
		fmt.Println(fe.Error())
	}
	// Output:
	// 4 2 tile <nil>
	// qps: must be >= 0.001, got 0
	// requests: must be even with --order tile, got 3
}
