package board

import (
	"strings"
	"testing"
)

// TestShowShape: nesting and keys and values are counted outside strings
// only, whatever the strings hold.
func TestShowShape(t *testing.T) {
	t.Parallel()
	deep := func(n int) string { return strings.Repeat(`[`, n) + strings.Repeat(`]`, n) }
	tests := []struct {
		name string
		show string
		ok   bool
	}{
		{"brackets in a string", `{"a":"` + strings.Repeat("{[", 100) + `"}`, true},
		{"escaped quotes in a string", `{"a":"\"{\"{\"{\"","b":"\\"}`, true},
		{"16 arrays deep", `{"a":` + deep(15) + `}`, true},
		{"17 arrays deep", `{"a":` + deep(16) + `}`, false},
		{"10,000 keys and values", `{"a":[` + strings.Repeat(`true, `, 9996) + `null]}`, true},
		{"10,001 keys and values", `{"a":[` + strings.Repeat(`-1.5e3,`, 9997) + `0]}`, false},
		{"4,999 keys", `{` + strings.Repeat(`"k":1,`, 4998) + `"k":"v"}`, true},
		{"5,000 keys", `{` + strings.Repeat(`"k":1,`, 4999) + `"k":"v"}`, false},
	}
	for _, tt := range tests {
		if err := showShape(tt.show); (err == nil) != tt.ok {
			t.Errorf("%s: showShape = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}
