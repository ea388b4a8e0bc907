package approvals_test

import (
	"testing"

	"github.com/symphonix/symphonix/approvals"
)

func TestWhatToDo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ruling approvals.Ruling
		want   approvals.Action
	}{
		{approvals.NotGoverned, approvals.Card},
		{approvals.Governed, approvals.Wait},
		{"", approvals.Wait},             // no answer, or no board reachable
		{"unknown", approvals.Wait},      // an answer this version does not know
		{"Not-Governed", approvals.Wait}, // near misses are not the explicit answer
		{"not governed", approvals.Wait},
	}
	for _, tt := range tests {
		if got := approvals.WhatToDo(tt.ruling); got != tt.want {
			t.Errorf("WhatToDo(%q) = %s, want %s", tt.ruling, got, tt.want)
		}
	}
}

func TestStillTheSameThing(t *testing.T) {
	t.Parallel()
	small, err := approvals.Digest(map[string]any{"amount": 5000}, "")
	if err != nil {
		t.Fatal(err)
	}
	large, err := approvals.Digest(map[string]any{"amount": 50000}, "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		decided, held string
		want          bool
	}{
		{"same operation", small, small, true},
		{"approved 5,000, now holds 50,000", small, large, false},
		{"a decision with no digest (an older raiser)", "", large, true},
		{"a digest for a note that has none", small, "", false},
	}
	for _, tt := range tests {
		if got := approvals.StillTheSameThing(tt.decided, tt.held); got != tt.want {
			t.Errorf("%s: StillTheSameThing(%s, %s) = %v, want %v", tt.name, tt.decided, tt.held, got, tt.want)
		}
	}
}

func TestAccountOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"string trimmed", "  the customer asked twice \n", "the customer asked twice"},
		{"list joined", []any{"asked twice", "stock is there"}, "asked twice\nstock is there"},
		{"[]string", []string{"one", "two"}, "one\ntwo"},
		{"empty string", "   ", ""},
		{"empty list", []any{}, ""},
		{"list with a number", []any{"one", 2.0}, ""},
		{"number", 5000.0, ""},
		{"object", map[string]any{"why": "because"}, ""},
		{"nil", nil, ""},
	}
	for _, tt := range tests {
		if got := approvals.AccountOf(tt.in); got != tt.want {
			t.Errorf("%s: AccountOf(%v) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}
