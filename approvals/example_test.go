package approvals_test

import (
	"fmt"

	"github.com/symphonix/symphonix/approvals"
)

func ExampleDigest() {
	// The same operation however its values were spelled: 5000 and 5000.0
	// are one number.
	show := map[string]any{"order": map[string]any{"id": "A-1042", "currency": "EUR", "total": 5000}}
	d, err := approvals.Digest(show, "Customer was charged twice for order A-1042.")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d)
	show["order"].(map[string]any)["total"] = 5000.0
	again, _ := approvals.Digest(show, "Customer was charged twice for order A-1042.")
	fmt.Println(again == d)
	// Output:
	// sha256:d3157854c4282b4741a825c3c4ba190f5b993fbb328cac0f95709e9aff17bcb6
	// true
}
