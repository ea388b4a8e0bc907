package llm

import (
	"slices"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/flow"
)

func TestFromEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		env      map[string]string
		wantDesc string
		check    func(t *testing.T, m flow.Model)
	}{
		{
			name:     "no key",
			env:      map[string]string{"OPENAI_MODEL": "gpt-x"},
			wantDesc: "model: stand-in (no OPENAI_API_KEY)",
			check: func(t *testing.T, m flow.Model) {
				if _, ok := m.(StandIn); !ok {
					t.Errorf("FromEnv = %T, want StandIn", m)
				}
			},
		},
		{
			name:     "a blank key",
			env:      map[string]string{"OPENAI_API_KEY": "  "},
			wantDesc: "model: stand-in (no OPENAI_API_KEY)",
		},
		{
			name:     "a key",
			env:      map[string]string{"OPENAI_API_KEY": testKey},
			wantDesc: "model: gpt-4o-mini at https://api.openai.com/v1",
			check: func(t *testing.T, m flow.Model) {
				c, ok := m.(*OpenAI)
				if !ok {
					t.Fatalf("FromEnv = %T, want *OpenAI", m)
				}
				if c.key != testKey {
					t.Errorf("the client's key is not the environment's")
				}
			},
		},
		{
			name:     "another provider",
			env:      map[string]string{"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": "http://localhost:11434/v1", "OPENAI_MODEL": "llama3.2"},
			wantDesc: "model: llama3.2 at http://localhost:11434/v1",
		},
		{
			name:     "a password in the base URL",
			env:      map[string]string{"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": "https://me:secret@proxy.example/v1"},
			wantDesc: "model: gpt-4o-mini at https://me:xxxxx@proxy.example/v1",
		},
		{
			name:     "a base URL that is not one",
			env:      map[string]string{"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": "localhost:11434"},
			wantDesc: `model: none, every call fails: llm: openai base URL "localhost:11434": want an absolute http or https URL`,
			check: func(t *testing.T, m flow.Model) {
				if _, err := m.Complete(t.Context(), flow.ModelRequest{Prompt: "x"}); err == nil || strings.Contains(err.Error(), testKey) {
					t.Errorf("Complete = %v, want an error without the key", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, desc := FromEnv(func(k string) string { return tt.env[k] })
			if desc != tt.wantDesc {
				t.Errorf("FromEnv description = %q, want %q", desc, tt.wantDesc)
			}
			if strings.Contains(desc, testKey) {
				t.Errorf("FromEnv description %q holds the key", desc)
			}
			if tt.check != nil {
				tt.check(t, m)
			}
		})
	}
}

// TestSecretEnv: every variable FromEnv reads is in SecretEnv, or is the
// model's name: a variable added to FromEnv is a decision about whether
// its value is a secret.
func TestSecretEnv(t *testing.T) {
	t.Parallel()
	read := map[string]bool{}
	FromEnv(func(name string) string {
		read[name] = true
		return map[string]string{"OPENAI_API_KEY": testKey}[name]
	})
	for name := range read {
		if name != "OPENAI_MODEL" && !slices.Contains(SecretEnv(), name) {
			t.Errorf("FromEnv reads %s, which SecretEnv does not name: say whether its value is a secret", name)
		}
	}
	if !read["OPENAI_API_KEY"] || !read["OPENAI_BASE_URL"] {
		t.Errorf("FromEnv read %v; want the key and the base URL among them", read)
	}
}
