package llm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/symphonix/symphonix/flow"
)

var _ flow.Model = (*OpenAI)(nil)

// Defaults for OpenAIConfig.
const (
	DefaultOpenAIBaseURL = "https://api.openai.com/v1"
	DefaultOpenAIModel   = "gpt-4o-mini"
	DefaultOpenAITimeout = 2 * time.Minute
)

// maxReplyBytes bounds how much of a provider's answer is read.
const maxReplyBytes = 16 << 20

// maxErrorChars bounds how much of a provider's error text goes into an error.
const maxErrorChars = 300

// OpenAIConfig configures an OpenAI client.
type OpenAIConfig struct {
	// BaseURL is the API's root, to which "/chat/completions" is added.
	// Empty means DefaultOpenAIBaseURL. Any OpenAI-compatible server will do.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" and nowhere else: it
	// is never in an error or a description. Empty sends no Authorization
	// header (a local server may need none).
	APIKey string
	// Model is the provider's model name. Empty means DefaultOpenAIModel.
	Model string
	// HTTPClient sends the requests. Nil means a client of the package's own.
	HTTPClient *http.Client
	// Timeout bounds one call, on top of the caller's context. Zero means
	// DefaultOpenAITimeout; negative means no bound but the context's.
	Timeout time.Duration
}

// OpenAI asks an OpenAI-compatible chat-completions API. It is safe for
// concurrent use. It does not retry: the engine's retry does (see the
// package comment).
type OpenAI struct {
	endpoint string // {BaseURL}/chat/completions
	baseURL  string // for descriptions: no credentials
	key      string
	model    string
	client   *http.Client
	timeout  time.Duration
}

// NewOpenAI checks cfg and returns a client. It refuses a BaseURL that is
// not an absolute http or https URL.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	base := strings.TrimRight(cmpOr(cfg.BaseURL, DefaultOpenAIBaseURL), "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: openai base URL %q: want an absolute http or https URL", redactURL(base))
	}
	c := &OpenAI{
		endpoint: base + "/chat/completions",
		baseURL:  u.Redacted(),
		key:      cfg.APIKey,
		model:    cmpOr(cfg.Model, DefaultOpenAIModel),
		client:   cfg.HTTPClient,
		timeout:  cfg.Timeout,
	}
	if c.client == nil {
		c.client = &http.Client{}
	}
	if c.timeout == 0 {
		c.timeout = DefaultOpenAITimeout
	}
	return c, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// redactURL hides a password in a URL that may not parse.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	return "(unparseable)"
}

// String says which model at which API, without the key:
// "gpt-4o-mini at https://api.openai.com/v1".
func (c *OpenAI) String() string {
	return c.model + " at " + c.baseURL
}

// ProviderError is a provider's refusal: an answer that is not 2xx. Message
// is the provider's own error message (any occurrence of the API key
// removed), cut to a few hundred characters.
type ProviderError struct {
	StatusCode int
	Message    string
	// Type is the provider's error type ("invalid_request_error"), if it said one.
	Type string
}

func (e *ProviderError) Error() string {
	s := fmt.Sprintf("openai: %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Errors a call returns (wrapped) that a caller may branch on.
var (
	// ErrNoChoices: the provider answered 2xx with no choices.
	ErrNoChoices = errors.New("openai: the reply has no choices")
	// ErrRefused: the model refused to answer (a structured-output refusal).
	ErrRefused = errors.New("openai: the model refused")
)

type chatMessage struct {
	Role string `json:"role"`
	// Content is the prompt as a string, or, with files, a list of
	// contentParts.
	Content any `json:"content"`
}

// contentPart is one part of a message that carries files: the text, an
// image, audio, or any other file.
type contentPart struct {
	Type       string      `json:"type"`
	Text       string      `json:"text,omitempty"`
	ImageURL   *imageURL   `json:"image_url,omitempty"`
	InputAudio *inputAudio `json:"input_audio,omitempty"`
	File       *filePart   `json:"file,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type inputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

type filePart struct {
	Filename string `json:"filename"`
	FileData string `json:"file_data"`
}

// content is what a request's one user message carries: the prompt alone,
// or, when the prompt reads files, the prompt as a text part followed by
// a part per file. An image is an image_url part with a base64 data URL;
// WAV and MP3 audio an input_audio part; anything else (a PDF, a text
// file, a video) a file part with its name and a base64 data URL — which
// a provider that does not take that type refuses, and the node fails
// with its refusal.
func content(req flow.ModelRequest) any {
	if len(req.Files) == 0 {
		return req.Prompt
	}
	parts := []contentPart{{Type: "text", Text: req.Prompt}}
	for _, f := range req.Files {
		mt, _, _ := strings.Cut(f.MediaType, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
		b64 := base64.StdEncoding.EncodeToString(f.Data)
		dataURL := "data:" + mt + ";base64," + b64
		switch {
		case strings.HasPrefix(mt, "image/"):
			parts = append(parts, contentPart{Type: "image_url", ImageURL: &imageURL{URL: dataURL}})
		case mt == "audio/wave" || mt == "audio/wav" || mt == "audio/x-wav":
			parts = append(parts, contentPart{Type: "input_audio", InputAudio: &inputAudio{Data: b64, Format: "wav"}})
		case mt == "audio/mpeg":
			parts = append(parts, contentPart{Type: "input_audio", InputAudio: &inputAudio{Data: b64, Format: "mp3"}})
		default:
			parts = append(parts, contentPart{Type: "file", File: &filePart{Filename: f.Name, FileData: dataURL}})
		}
	}
	return parts
}

type chatRequest struct {
	Model          string          `json:"model"`
	Messages       []chatMessage   `json:"messages"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

type responseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *jsonSchema `json:"json_schema,omitempty"`
}

type jsonSchema struct {
	Name   string         `json:"name"`
	Schema map[string]any `json:"schema"`
	Strict bool           `json:"strict"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        *int `json:"prompt_tokens"`
		CompletionTokens    *int `json:"completion_tokens"`
		TotalTokens         *int `json:"total_tokens"`
		PromptTokensDetails *struct {
			CachedTokens *int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

type errorResponse struct {
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

// Complete sends req's prompt as one user message, with the files it
// reads as content parts (see content). A request with a schema (its
// JSONSchema as it is, else its Schema converted) asks for structured output (response_format json_schema, not strict:
// strict mode cannot say minLength and the like, and the engine checks
// the reply either way). Usage is the provider's prompt_tokens,
// completion_tokens, prompt_tokens_details.cached_tokens and total_tokens,
// nil when it reported none.
func (c *OpenAI) Complete(ctx context.Context, req flow.ModelRequest) (flow.ModelReply, error) {
	body := chatRequest{
		Model:    c.model,
		Messages: []chatMessage{{Role: "user", Content: content(req)}},
	}
	switch {
	case req.JSONSchema != nil:
		body.ResponseFormat = &responseFormat{
			Type:       "json_schema",
			JSONSchema: &jsonSchema{Name: "reply", Schema: req.JSONSchema, Strict: false},
		}
	case req.Schema != nil:
		body.ResponseFormat = &responseFormat{
			Type:       "json_schema",
			JSONSchema: &jsonSchema{Name: "reply", Schema: JSONSchema(req.Schema), Strict: false},
		}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return flow.ModelReply{}, fmt.Errorf("openai: encode request: %w", err)
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(raw))
	if err != nil {
		return flow.ModelReply{}, fmt.Errorf("openai: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if c.key != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.client.Do(hreq)
	if err != nil {
		return flow.ModelReply{}, c.callError(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes))
	if err != nil {
		return flow.ModelReply{}, c.callError(ctx, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return flow.ModelReply{}, c.providerError(resp.StatusCode, data)
	}
	var cr chatResponse
	if err := json.Unmarshal(data, &cr); err != nil {
		return flow.ModelReply{}, fmt.Errorf("openai: read reply: %w", err)
	}
	if len(cr.Choices) == 0 {
		return flow.ModelReply{}, ErrNoChoices
	}
	msg := cr.Choices[0].Message
	if msg.Content == nil && msg.Refusal != nil {
		return flow.ModelReply{}, fmt.Errorf("%w: %s", ErrRefused, c.clean(*msg.Refusal))
	}
	var reply flow.ModelReply
	if msg.Content != nil {
		reply.Text = *msg.Content
	}
	if u := cr.Usage; u != nil && (u.PromptTokens != nil || u.CompletionTokens != nil) {
		reply.Usage = &flow.Usage{}
		if u.PromptTokens != nil {
			reply.Usage.InputTokens = *u.PromptTokens
		}
		if u.CompletionTokens != nil {
			reply.Usage.OutputTokens = *u.CompletionTokens
		}
		if u.TotalTokens != nil {
			reply.Usage.TotalTokens = *u.TotalTokens
		}
		if d := u.PromptTokensDetails; d != nil && d.CachedTokens != nil {
			reply.Usage.CachedTokens = *d.CachedTokens
		}
	}
	return reply, nil
}

// callError explains a call that got no answer. A time limit, the client's
// or the caller's, is wrapped so that errors.Is(err,
// context.DeadlineExceeded) holds.
func (c *OpenAI) callError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return fmt.Errorf("openai: no answer from %s in time: %w", c.baseURL, ctxErr)
		}
		return fmt.Errorf("openai: %w", ctxErr)
	}
	// A *url.Error names the URL, never the headers, so the key is not in it.
	return fmt.Errorf("openai: %w", err)
}

// providerError reads a non-2xx answer: the provider's {"error":{...}}
// when it sent one, else the opening of what it sent.
func (c *OpenAI) providerError(status int, body []byte) error {
	e := &ProviderError{StatusCode: status}
	var er errorResponse
	if json.Unmarshal(body, &er) == nil && er.Error != nil {
		e.Message, e.Type = er.Error.Message, er.Error.Type
	} else {
		e.Message = string(body)
	}
	e.Message = c.clean(e.Message)
	return e
}

// clean makes provider text fit for an error: one line, the key removed,
// and at most maxErrorChars characters.
func (c *OpenAI) clean(s string) string {
	if c.key != "" {
		s = strings.ReplaceAll(s, c.key, "[api key]")
	}
	return opening(s, maxErrorChars)
}
