package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRulesCommands: put from flags and from a file (what list -o json
// prints for a rule is a file put takes), list, delete, and the
// refusals.
func TestRulesCommands(t *testing.T) {
	t.Parallel()
	f := startFleet(t)
	out := f.ok(t, "rules", "put", "--id", "refunds", "--agent", "refund-*", "--node", "approve",
		"--person", "ann@example.com", "--person", "bob@example.com", "--quorum", "2", "--time-limit", "24h", "--require-reason")
	if !regexpLine(out, `^refunds\s+refund-\*\s+approve\s+ann@example.com,bob@example.com\s+2\s+24h0m0s\s+required\s+no\s+-$`) {
		t.Errorf("rules put:\n%s", out)
	}
	type ruleJSON struct {
		ID            string   `json:"id"`
		Agent         string   `json:"agent"`
		People        []string `json:"people"`
		Quorum        int      `json:"quorum"`
		TimeLimit     string   `json:"time_limit"`
		RequireReason bool     `json:"require_reason"`
		UpdatedBy     string   `json:"updated_by"`
	}
	rules := decodeJSON[[]ruleJSON](t, f.ok(t, "rules", "list", "-o", "json"))
	if len(rules) != 1 || rules[0].ID != "refunds" || rules[0].Quorum != 2 || rules[0].TimeLimit != "86400s" || !rules[0].RequireReason || rules[0].UpdatedBy != "ops" {
		t.Fatalf("rules list -o json = %+v", rules)
	}

	// A rule as list -o json prints it, changed, put back from a file.
	raw := decodeJSON[[]map[string]any](t, f.ok(t, "rules", "list", "-o", "json"))[0]
	raw["id"], raw["description"] = "refunds-2", "a copy"
	raw["agent"] = "other-bot"
	file := filepath.Join(t.TempDir(), "rule.json")
	writeJSON(t, file, raw)
	f.ok(t, "rules", "put", "--file", file)
	if out := f.ok(t, "rules", "list"); !regexpLine(out, `^refunds-2\s+other-bot\s+approve\s.*a copy$`) {
		t.Errorf("rules list after put --file:\n%s", out)
	}

	_, _, err := f.board(t, "rules", "put", "--file", file, "--agent", "x")
	wantExit(t, err, 2, "--file and --agent")
	writeJSON(t, file, map[string]any{"agent": "*", "node": "*", "role": "ROLE_ADMIN", "colour": "red"})
	_, _, err = f.board(t, "rules", "put", "--file", file)
	wantExit(t, err, 2, "--file", "colour")
	_, _, err = f.board(t, "rules", "put", "--agent", "*", "--node", "*")
	wantExit(t, err, 2, "--role or --person")
	_, _, err = f.board(t, "rules", "put", "--agent", "*", "--node", "*", "--role", "viewer")
	wantExit(t, err, 2, "--role", "approver or admin")
	_, _, err = f.board(t, "rules", "put", "--agent", "*", "--node", "*", "--role", "admin", "--time-limit", "soon")
	wantExit(t, err, 2, "--time-limit")
	// The board's own refusal, naming the field: the same agent and node
	// as another rule.
	_, _, err = f.board(t, "rules", "put", "--agent", "refund-*", "--node", "approve", "--role", "admin")
	wantExit(t, err, 1, "refunds")

	if out := f.ok(t, "rules", "delete", "refunds"); out != "rule refunds deleted\n" {
		t.Errorf("rules delete: %q", out)
	}
	_, _, err = f.board(t, "rules", "delete", "refunds")
	wantExit(t, err, 1, "refunds")
	if out := f.ok(t, "rules", "list"); strings.Contains(out, "refunds ") {
		t.Errorf("rules list after delete:\n%s", out)
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
