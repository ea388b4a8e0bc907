package approvals_test

import (
	"testing"

	"github.com/symphonix/symphonix/approvals"
)

// TestDigest pins the operation's encoding: each want is the jcs digest of
// the JSON text beside it, so a change to what Digest hashes fails here
// before it strands a decision in flight.
func TestDigest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		show    map[string]any
		account string
		text    string // what is hashed, for the reader
		want    string
	}{
		{
			name:    "shown values and an account",
			show:    map[string]any{"order": map[string]any{"id": "A-7", "currency": "EUR", "total": 5000}},
			account: "the customer asked twice\nstock is there",
			text:    `{"show":{"order":{"currency":"EUR","id":"A-7","total":5000}},"account":"the customer asked twice\nstock is there"}`,
			want:    "sha256:83c7074811d2965dab8f80da3d75512a9caf01adbc7599d5b25bc0e9087a3552",
		},
		{
			name: "no account is null",
			show: map[string]any{"amount": 5000.0},
			text: `{"show":{"amount":5000},"account":null}`,
			want: "sha256:8417a9f9e14b7f813fdcca8c621797124ff31c504d5fc13b4ca33121c712c7ef",
		},
		{
			name:    "docs/link.md's example",
			show:    map[string]any{"order": "A-1043", "amount": map[string]any{"value": 740.5, "currency": "EUR"}},
			account: "The order arrived damaged.",
			text:    `{"account":"The order arrived damaged.","show":{"amount":{"currency":"EUR","value":740.5},"order":"A-1043"}}`,
			want:    "sha256:c0bad5ace6e1a1f08ffd67a750900d46df1943ff39f96bc0fdadec2ee7f1d705",
		},
		{
			name: "docs/link.md's nothing shown, no account",
			show: map[string]any{},
			text: `{"account":null,"show":{}}`,
			want: "sha256:058e1f6d0f4d609be992d8efad942df04a87b9b85a56b2defa6e9c9000050318",
		},
	}
	for _, tt := range tests {
		got, err := approvals.Digest(tt.show, tt.account)
		if err != nil {
			t.Fatalf("%s: Digest: %v", tt.name, err)
		}
		if got != tt.want {
			t.Errorf("%s: Digest = %s, want %s (the digest of %s)", tt.name, got, tt.want, tt.text)
		}
	}
}
