package llm

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestOpenAICheck: a GET of the models with the key passes; a key the
// provider refuses fails, saying so without the key; a model configured
// wrong fails with why; the stand-in has no check.
func TestOpenAICheck(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/v1/models" {
			t.Errorf("%s %s, want GET /v1/models", r.Method, r.URL.Path)
		}
		if r.Header.Get("Authorization") != "Bearer "+testKey {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error": {"message": "Incorrect API key provided: `+r.Header.Get("Authorization")+`", "type": "invalid_request_error"}}`)
			return
		}
		io.WriteString(w, `{"object": "list", "data": [{"id": "gpt-4o-mini", "object": "model"}]}`)
	}))
	t.Cleanup(srv.Close)
	env := func(key string) func(string) string {
		return func(name string) string {
			return map[string]string{"OPENAI_API_KEY": key, "OPENAI_BASE_URL": srv.URL + "/v1"}[name]
		}
	}
	m, _ := FromEnv(env(testKey))
	if err := m.(Checker).Check(t.Context()); err != nil {
		t.Errorf("Check with the right key = %v", err)
	}
	wrong := "sk-wrong-0123456789abcdefghij"
	m, _ = FromEnv(env(wrong))
	err := m.(Checker).Check(t.Context())
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), wrong) {
		t.Errorf("Check with a wrong key = %v, want a 401 without the key", err)
	}
	m, _ = FromEnv(func(name string) string {
		return map[string]string{"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": "not a url"}[name]
	})
	if err := m.(Checker).Check(t.Context()); err == nil {
		t.Error("Check of a model configured wrong = nil, want why")
	}
	if _, ok := any(StandIn{}).(Checker); ok {
		t.Error("the stand-in has a check; want none: it always answers")
	}
}
