package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/flow"
)

const testKey = "sk-test-0123456789abcdef"

// fakeProvider is an OpenAI-compatible chat-completions server. It checks
// every request the way the real one would read it, and answers with
// answer.
type fakeProvider struct {
	t          *testing.T
	wantSchema map[string]any // the JSON schema the request must carry; nil: no response_format
	answer     func(w http.ResponseWriter, r *http.Request)
}

func (p *fakeProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := p.t
	if r.Method != http.MethodPost {
		t.Errorf("method = %s, want POST", r.Method)
	}
	if r.URL.Path != "/v1/chat/completions" {
		t.Errorf("path = %s, want /v1/chat/completions", r.URL.Path)
	}
	if got, want := r.Header.Get("Authorization"), "Bearer "+testKey; got != want {
		t.Errorf("Authorization = %q, want %q", got, want)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		t.Errorf("read request: %v", err)
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Errorf("request body %q is not JSON: %v", raw, err)
	}
	want := map[string]any{
		"model":    "gpt-test",
		"messages": []any{map[string]any{"role": "user", "content": "Classify: I was charged twice"}},
	}
	if p.wantSchema != nil {
		want["response_format"] = map[string]any{
			"type": "json_schema",
			"json_schema": map[string]any{
				"name":   "reply",
				"schema": p.wantSchema,
				"strict": false,
			},
		}
	}
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	p.answer(w, r)
}

// completion is a chat-completions answer as OpenAI writes one.
func completion(content string, usage bool) string {
	s := `{"id":"chatcmpl-9xyz","object":"chat.completion","created":1735000000,"model":"gpt-test-2024-07-18",
	"choices":[{"index":0,"message":{"role":"assistant","content":` + quote(content) + `,"refusal":null},"logprobs":null,"finish_reason":"stop"}]`
	if usage {
		s += `,"usage":{"prompt_tokens":27,"completion_tokens":14,"total_tokens":41,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`
	}
	return s + `,"system_fingerprint":"fp_0123"}`
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func respond(status int, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

var classifierJSONSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"category":   map[string]any{"type": "string", "enum": []any{"technical", "billing", "general"}},
		"confidence": map[string]any{"type": "number", "minimum": 0.0, "maximum": 1.0},
		"reason":     map[string]any{"type": "string"},
	},
	"required":             []any{"category", "confidence"},
	"additionalProperties": false,
}

func TestOpenAI(t *testing.T) {
	t.Parallel()
	const answer = `{"category":"billing","confidence":0.94}`
	tests := []struct {
		name      string
		schema    *flow.Schema
		answer    func(http.ResponseWriter, *http.Request)
		timeout   time.Duration
		want      flow.ModelReply
		wantErr   error  // errors.Is
		wantText  string // in the error
		wantAbout int    // a *ProviderError with this status
	}{
		{
			name:   "structured, with usage",
			schema: classifier,
			answer: respond(200, completion(answer, true)),
			want:   flow.ModelReply{Text: answer, Usage: &flow.Usage{InputTokens: 27, OutputTokens: 14, TotalTokens: 41}},
		},
		{
			name: "usage with cached tokens",
			answer: respond(200, strings.Replace(completion("ok", false), `,"system_fingerprint"`,
				`,"usage":{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,"prompt_tokens_details":{"cached_tokens":1920,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}},"system_fingerprint"`, 1)),
			want: flow.ModelReply{Text: "ok", Usage: &flow.Usage{InputTokens: 2006, OutputTokens: 300, CachedTokens: 1920, TotalTokens: 2306}},
		},
		{
			name: "usage without a total or details",
			answer: respond(200, strings.Replace(completion("ok", false), `,"system_fingerprint"`,
				`,"usage":{"prompt_tokens":5,"completion_tokens":2},"system_fingerprint"`, 1)),
			want: flow.ModelReply{Text: "ok", Usage: &flow.Usage{InputTokens: 5, OutputTokens: 2}},
		},
		{
			name:   "text, without usage",
			answer: respond(200, completion("It was charged twice.", false)),
			want:   flow.ModelReply{Text: "It was charged twice."},
		},
		{
			name:   "usage null",
			answer: respond(200, strings.Replace(completion("ok", false), `,"system_fingerprint"`, `,"usage":null,"system_fingerprint"`, 1)),
			want:   flow.ModelReply{Text: "ok"},
		},
		{
			name:      "401 with an error body",
			answer:    respond(401, `{"error":{"message":"Incorrect API key provided: sk-test-****cdef. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`),
			wantAbout: 401,
			wantText:  "Incorrect API key provided",
		},
		{
			name:      "an error that repeats the key",
			answer:    respond(403, `{"error":{"message":"key `+testKey+` may not use gpt-test","type":"permission_error","code":null}}`),
			wantAbout: 403,
			wantText:  "key [api key] may not use gpt-test",
		},
		{
			name:      "500 without JSON",
			answer:    respond(500, "<html><body>upstream connect error\n\nor disconnect</body></html>"),
			wantAbout: 500,
			wantText:  "500 Internal Server Error: <html><body>upstream connect error or disconnect</body></html>",
		},
		{
			name:      "429",
			answer:    respond(429, `{"error":{"message":"Rate limit reached for gpt-test","type":"requests","code":"rate_limit_exceeded"}}`),
			wantAbout: 429,
			wantText:  "Rate limit reached",
		},
		{
			name:     "malformed JSON",
			answer:   respond(200, `{"choices":[{"message":{"content":"half`),
			wantText: "read reply",
		},
		{
			name:    "empty choices",
			answer:  respond(200, `{"id":"chatcmpl-1","object":"chat.completion","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":0}}`),
			wantErr: ErrNoChoices,
		},
		{
			name:     "refusal",
			schema:   classifier,
			answer:   respond(200, `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`),
			wantErr:  ErrRefused,
			wantText: "I can't help with that.",
		},
		{
			name: "no answer in time",
			answer: func(w http.ResponseWriter, r *http.Request) {
				<-r.Context().Done() // until the client gives up
			},
			timeout: 50 * time.Millisecond,
			wantErr: context.DeadlineExceeded,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := &fakeProvider{t: t, answer: tt.answer}
			if tt.schema != nil {
				p.wantSchema = classifierJSONSchema // every schema case asks with classifier
			}
			srv := httptest.NewServer(p)
			t.Cleanup(srv.Close)
			c, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1/", APIKey: testKey, Model: "gpt-test", HTTPClient: srv.Client(), Timeout: tt.timeout})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Complete(t.Context(), flow.ModelRequest{Node: "classify", Prompt: "Classify: I was charged twice", Schema: tt.schema})
			if tt.wantErr == nil && tt.wantText == "" && tt.wantAbout == 0 {
				if err != nil {
					t.Fatalf("Complete = %v", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("Complete (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil {
				t.Fatalf("Complete = %+v, want an error", got)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("Complete = %v, which holds the API key", err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Complete = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("Complete = %v, want it to say %q", err, tt.wantText)
			}
			if tt.wantAbout != 0 {
				var pe *ProviderError
				if !errors.As(err, &pe) || pe.StatusCode != tt.wantAbout {
					t.Errorf("Complete = %v, want a *ProviderError with status %d", err, tt.wantAbout)
				}
				if !strings.Contains(err.Error(), http.StatusText(tt.wantAbout)) {
					t.Errorf("Complete = %v, want it to name the status", err)
				}
			}
		})
	}
}

func roundTrip(t *testing.T, v any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestOpenAICallerDeadline: the caller's own deadline ends a call too.
func TestOpenAICallerDeadline(t *testing.T) {
	t.Parallel()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // the server notices a client going away only once the body is read
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) }) // runs first: no handler outlives the test
	c, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL, APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Complete(ctx, flow.ModelRequest{Prompt: "x"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Complete past the caller's deadline = %v, want context.DeadlineExceeded", err)
	}
}

func TestOpenAINoKeyNoHeader(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, ok := r.Header["Authorization"]; ok {
			t.Errorf("Authorization = %q, want none without a key", h)
		}
		io.WriteString(w, completion("hi", false))
	}))
	t.Cleanup(srv.Close)
	c, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.Complete(t.Context(), flow.ModelRequest{Prompt: "x"}); err != nil || got.Text != "hi" {
		t.Errorf("Complete = %+v, %v; want hi", got, err)
	}
}

func TestNewOpenAI(t *testing.T) {
	t.Parallel()
	c, err := NewOpenAI(OpenAIConfig{APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.String(), "gpt-4o-mini at https://api.openai.com/v1"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if c.endpoint != "https://api.openai.com/v1/chat/completions" || c.timeout != DefaultOpenAITimeout {
		t.Errorf("defaults: endpoint %s, timeout %v", c.endpoint, c.timeout)
	}
	for _, bad := range []string{"api.openai.com/v1", "ftp://example.com", "http://", "://x"} {
		if _, err := NewOpenAI(OpenAIConfig{BaseURL: bad, APIKey: testKey}); err == nil {
			t.Errorf("NewOpenAI(BaseURL %q) = nil error, want one", bad)
		} else if strings.Contains(err.Error(), testKey) {
			t.Errorf("NewOpenAI(BaseURL %q) = %v, which holds the key", bad, err)
		}
	}
}

// A prompt that reads files sends them as content parts: an image as a
// base64 data URL, any other file as a file part.
func TestOpenAISendsFiles(t *testing.T) {
	t.Parallel()
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Errorf("request body: %v", err)
		}
		io.WriteString(w, completion("a cat", false))
	}))
	defer srv.Close()
	c, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: testKey, Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	req := flow.ModelRequest{Node: "look", Prompt: "What is this?", Files: []flow.ModelFile{
		{File: flow.File{ID: "a.png", Name: "cat.png", MediaType: "image/png"}, Data: []byte("PNG")},
		{File: flow.File{ID: "b.pdf", Name: "menu.pdf", MediaType: "application/pdf"}, Data: []byte("%PDF")},
		{File: flow.File{ID: "c.wav", Name: "meow.wav", MediaType: "audio/wave"}, Data: []byte("RIFF")},
	}}
	reply, err := c.Complete(t.Context(), req)
	if err != nil || reply.Text != "a cat" {
		t.Fatalf("Complete = %+v, %v", reply, err)
	}
	want := []any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "What is this?"},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,UE5H"}},
		map[string]any{"type": "file", "file": map[string]any{"filename": "menu.pdf", "file_data": "data:application/pdf;base64,JVBERg=="}},
		map[string]any{"type": "input_audio", "input_audio": map[string]any{"data": "UklGRg==", "format": "wav"}},
	}}}
	if diff := cmp.Diff(want, got["messages"]); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

// TestOpenAIJSONSchema: a request's JSONSchema is sent as it is, in place
// of its Schema.
func TestOpenAIJSONSchema(t *testing.T) {
	t.Parallel()
	schema := map[string]any{"type": "object", "additionalProperties": false, "required": []any{"ok"}, "properties": map[string]any{
		"ok":   map[string]any{"type": "boolean"},
		"tags": map[string]any{"anyOf": []any{map[string]any{"type": "array", "items": map[string]any{"type": "string"}}, map[string]any{"type": "null"}}},
	}}
	p := &fakeProvider{t: t, wantSchema: schema, answer: func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, completion(`{"ok":true}`, false))
	}}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	c, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: testKey, Model: "gpt-test", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Complete(t.Context(), flow.ModelRequest{Prompt: "Classify: I was charged twice", Schema: classifier, JSONSchema: schema})
	if err != nil || got.Text != `{"ok":true}` {
		t.Errorf("Complete = %+v, %v, want the answer", got, err)
	}
}
