package board

import (
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect/v2"
)

func TestPageTokenRoundTrip(t *testing.T) {
	p := pageTokens{key: []byte("one board's key")}
	for _, position := range [][]string{{}, {"desk"}, {"1767225600000000", "apr-0123"}, {"", "a\x00b", strings.Repeat("é", 100)}} {
		token := p.make("ListApprovals", []string{"pending", "desk"}, position...)
		if strings.ContainsAny(token, "+/=") {
			t.Errorf("token %q: not URL-safe", token)
		}
		got, err := p.open(token, "ListApprovals", []string{"pending", "desk"})
		if err != nil || !slices.Equal(got, position) {
			t.Errorf("open(make(%q)) = %q, %v", position, got, err)
		}
	}
	// Another board on the same store derives the same key.
	other := pageTokens{key: []byte("one board's key")}
	if _, err := other.open(p.make("ListRules", nil, "k"), "ListRules", nil); err != nil {
		t.Errorf("a token of a board with the same key: %v", err)
	}
}

func TestPageTokenRefused(t *testing.T) {
	p := pageTokens{key: []byte("one board's key")}
	token := p.make("ListApprovals", []string{"pending", ""}, "1767225600000000", "apr-1")
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) string {
		b := slices.Clone(raw)
		b[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	tests := []struct {
		name, token, method string
		filters             []string
		want                string // the message begins with it
	}{
		{"another method", token, "ListAgents", []string{"pending", ""}, "page_token: made for ListApprovals, not for this list"},
		{"other filters", token, "ListApprovals", []string{"approved", ""}, "page_token: made for other filters"},
		{"a filter moved from one field to the next", token, "ListApprovals", []string{"", "pending"}, "page_token: made for other filters"},
		{"fewer filters", token, "ListApprovals", []string{"pending"}, "page_token: made for other filters"},
		{"another key", pageTokens{key: []byte("another board's key")}.make("ListApprovals", []string{"pending", ""}, "1767225600000000", "apr-1"),
			"ListApprovals", []string{"pending", ""}, "page_token: not a page token of this board, or changed"},
		{"the position changed", flip(len(raw) - pageTokenMAC - 1), "ListApprovals", []string{"pending", ""}, "page_token: not a page token of this board, or changed"},
		{"the method changed", flip(2), "ListApprovals", []string{"pending", ""}, "page_token: not a page token of this board, or changed"},
		{"the signature changed", flip(len(raw) - 1), "ListApprovals", []string{"pending", ""}, "page_token: not a page token of this board, or changed"},
		{"cut short", token[:10], "ListApprovals", []string{"pending", ""}, "page_token: not a page token"},
		{"not base64", "a token!", "ListApprovals", []string{"pending", ""}, "page_token: not a page token"},
		{"too long", strings.Repeat("A", maxPageToken+1), "ListApprovals", nil, "page_token: 2049 bytes, at most 2048"},
	}
	for _, tt := range tests {
		_, err := p.open(tt.token, tt.method, tt.filters)
		var ce *connect.Error
		if !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument || !strings.HasPrefix(ce.Message(), tt.want) {
			t.Errorf("%s: open = %v, want invalid_argument %q…", tt.name, err, tt.want)
		}
	}
}
