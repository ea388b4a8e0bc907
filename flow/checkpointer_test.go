package flow

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckpointerRequired(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string
		want error
		node string
	}{
		{"approval", "testdata/place-order.json", ErrApprovalNeedsCheckpointer, `"place"`},
		{"ask", "testdata/clarify.json", ErrAskNeedsCheckpointer, `"clarify"`},
		{"neither", "testdata/classify.json", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := LoadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			err = CheckpointerRequired(f)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("CheckpointerRequired(%s) = %v, want %v", tt.file, err, tt.want)
			}
			if err != nil && !strings.Contains(err.Error(), tt.node) {
				t.Errorf("CheckpointerRequired(%s) = %q, want it to name node %s", tt.file, err, tt.node)
			}
			// The flow is valid all the same: this is the build's refusal.
			if ps := Validate(f); len(ps) != 0 {
				t.Errorf("Validate(%s) = %v, want no problems", tt.file, ps)
			}
		})
	}
	if err := CheckpointerRequired(nil); err != nil {
		t.Errorf("CheckpointerRequired(nil) = %v, want nil", err)
	}
}
