package main

import (
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	t.Parallel()
	for message, want := range map[string]string{
		"Why was I charged twice?": "billing: Your invoices",
		"The app will not start.":  "other: Thank you",
	} {
		var out strings.Builder
		if err := run(t.Context(), message, &out); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.String(), want) {
			t.Errorf("run(%q) printed %q, want it to start with %q", message, out.String(), want)
		}
	}
}
