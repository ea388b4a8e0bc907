package llm

import (
	"context"
	"strings"

	"github.com/symphonix/symphonix/flow"
)

// FromEnv returns the model an agent asks, and a line saying which, to
// print when the agent starts. With OPENAI_API_KEY set it is OpenAI, at
// OPENAI_BASE_URL and with OPENAI_MODEL when they are set:
//
//	model: gpt-4o-mini at https://api.openai.com/v1
//
// Without it, the StandIn:
//
//	model: stand-in (no OPENAI_API_KEY)
//
// The line never holds the key. A key with an OPENAI_BASE_URL that is not a
// URL is a mistake, not an absence: the model returned then fails every call
// with the reason (said on the line too), rather than quietly answering with
// a stand-in where somebody asked for a real model.
func FromEnv(getenv func(string) string) (flow.Model, string) {
	key := strings.TrimSpace(getenv("OPENAI_API_KEY"))
	if key == "" {
		return StandIn{}, "model: stand-in (no OPENAI_API_KEY)"
	}
	c, err := NewOpenAI(OpenAIConfig{
		BaseURL: strings.TrimSpace(getenv("OPENAI_BASE_URL")),
		APIKey:  key,
		Model:   strings.TrimSpace(getenv("OPENAI_MODEL")),
	})
	if err != nil {
		return broken{err}, "model: none, every call fails: " + err.Error()
	}
	return c, "model: " + c.String()
}

// SecretEnv names the variables FromEnv reads whose values are secrets: the
// key, and the base URL, which may carry a proxy's user and password. The
// model's name (OPENAI_MODEL) is not one: the start line says it, and a
// reply may name it. A journal removes the values of these (see package
// secrets).
func SecretEnv() []string { return []string{"OPENAI_API_KEY", "OPENAI_BASE_URL"} }

// broken is a model that was configured wrong: every call fails with why.
type broken struct{ err error }

func (b broken) Complete(context.Context, flow.ModelRequest) (flow.ModelReply, error) {
	return flow.ModelReply{}, b.err
}
