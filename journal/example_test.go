package journal_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/symphonix/symphonix/journal"
)

// A journal line as it leaves the agent by default: what ran, when, how
// long and how it went, with the payloads named in withheld rather than
// shown.
func ExampleWithoutPayloads() {
	e := journal.Entry{
		At:         time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC),
		Thread:     "chat-1",
		Run:        "5f0c3a9e2b7d4c1f8a6e0d9b3c2a1f4e",
		Node:       "decide",
		Kind:       journal.KindLLM,
		Name:       "decide",
		DurationMS: 412,
		OK:         true,
		Tokens:     &journal.Tokens{Input: 120, Output: 30, Cached: 96, Total: 150},
		Prompt:     "A customer wrote about order A-1001: …",
		Reply:      `{"action": "refund", "reason": "The mug arrived broken."}`,
	}
	line, _ := json.Marshal(journal.WithoutPayloads(e))
	fmt.Println(string(line))
	// Output:
	// {"at":"2026-11-30T09:00:00Z","thread":"chat-1","run":"5f0c3a9e2b7d4c1f8a6e0d9b3c2a1f4e","node":"decide","kind":"llm","name":"decide","duration_ms":412,"ok":true,"tokens":{"input":120,"output":30,"cached":96,"total":150},"withheld":["prompt","reply"]}
}
