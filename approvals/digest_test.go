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
