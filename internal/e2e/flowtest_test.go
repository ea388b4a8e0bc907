package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentTestExample: agent test runs the refund desk's test file with
// the real binary, every case passes, and it exits 0 with the summary.
func TestAgentTestExample(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(filepath.Join(bin, "agent"), "test", example(t, "refund-desk")).CombinedOutput()
	if err != nil {
		t.Fatalf("agent test examples/refund-desk: %v\n%s", err, out)
	}
	for _, want := range []string{
		"=== refund-desk.test.json\n",
		"ok    a refund approved is paid and answered (",
		"ok    a refund refused by the approver is never paid (",
		"\n4 passed, 0 failed\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("agent test output lacks %q:\n%s", want, out)
		}
	}
}

// TestAgentTestFailing: a copy of the refund desk whose test expects the
// wrong reply exits 1 and says what was expected and what came instead,
// in text and in JSON.
func TestAgentTestFailing(t *testing.T) {
	t.Parallel()
	dir := example(t, "refund-desk")
	path := filepath.Join(dir, "refund-desk.test.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wrong := strings.Replace(string(b), `"reply": "We have refunded your order A-1001."`, `"reply": "Sorry, no."`, 1)
	if wrong == string(b) {
		t.Fatal("the example's test file no longer expects the reply this test changes")
	}
	if err := os.WriteFile(path, []byte(wrong), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(bin, "agent"), "test", dir).Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("agent test of a failing case: %v, want exit status 1\n%s", err, out)
	}
	for _, want := range []string{
		"FAIL  a refund approved is paid and answered (",
		`        state.reply: expected "Sorry, no.", got "We have refunded your order A-1001."`,
		"\n3 passed, 1 failed\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("agent test output lacks %q:\n%s", want, out)
		}
	}

	out, err = exec.Command(filepath.Join(bin, "agent"), "test", "--output", "json", dir).Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("agent test --output json of a failing case: %v, want exit status 1\n%s", err, out)
	}
	var got struct {
		Files []struct {
			File  string `json:"file"`
			Cases []struct {
				Name    string   `json:"name"`
				Passed  bool     `json:"passed"`
				Failure []string `json:"failure"`
			} `json:"cases"`
		} `json:"files"`
		Passed int  `json:"passed"`
		Failed int  `json:"failed"`
		OK     bool `json:"ok"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("agent test --output json: %v\n%s", err, out)
	}
	if got.Passed != 3 || got.Failed != 1 || got.OK || len(got.Files) != 1 || got.Files[0].Cases[0].Passed ||
		len(got.Files[0].Cases[0].Failure) != 1 || !strings.HasPrefix(got.Files[0].Cases[0].Failure[0], "state.reply: expected") {
		t.Errorf("agent test --output json = %+v, want 3 passed, 1 failed on state.reply", got)
	}
}

// TestAgentTestUsage: a bad --run is a usage error, exit 2.
func TestAgentTestUsage(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(filepath.Join(bin, "agent"), "test", "--run", "(", example(t, "refund-desk")).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "--run") {
		t.Errorf("agent test --run '(': %v, want exit status 2 naming --run\n%s", err, out)
	}
}
