package jcs_test

import (
	"fmt"

	"github.com/symphonix/symphonix/jcs"
)

func ExampleDigest() {
	// Key order, whitespace and number spelling do not change the digest.
	a := `{"show":{"amount":5000,"currency":"EUR","order":"A-1042"},"account":"Customer was charged twice for order A-1042."}`
	b := `{ "account": "Customer was charged twice for order A-1042.",
	       "show": { "order": "A-1042", "currency": "EUR", "amount": 5000.0 } }`
	for _, op := range []string{a, b} {
		d, err := jcs.Digest([]byte(op))
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(d)
	}
	// Output:
	// sha256:9d687cb98a9307183f17fa87ba0950a19aaa10bc3e29e6d1facb6417afbd5d60
	// sha256:9d687cb98a9307183f17fa87ba0950a19aaa10bc3e29e6d1facb6417afbd5d60
}

func ExampleCanonical() {
	c, err := jcs.Canonical([]byte(`{"b": 1e3, "a": "caf\u00e9"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(c))
	// Output: {"a":"café","b":1000}
}
