package llm

import (
	"context"
	"io"
	"net/http"
	"strings"
)

// Checker is a model that can say whether it answers, without asking it
// anything: OpenAI does, and a model configured wrong, and the stand-in
// does not (it always answers).
type Checker interface {
	Check(ctx context.Context) error
}

// Check asks the API for its list of models (GET {BaseURL}/models, with
// the key), which costs no tokens: a key the provider refuses, a base URL
// that is not there and a provider that does not answer within ctx each
// fail it, saying why without the key. It is the health check of the
// model an agent asks.
func (c *OpenAI) Check(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.endpoint, "/chat/completions")+"/models", nil)
	if err != nil {
		return c.callError(ctx, err)
	}
	req.Header.Set("Accept", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return c.callError(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10)) // the error, if any; the list is not read
	if err != nil && (resp.StatusCode < 200 || resp.StatusCode > 299) {
		return c.callError(ctx, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return c.providerError(resp.StatusCode, data)
	}
	return nil
}

// Check fails with why the model was configured wrong.
func (b broken) Check(context.Context) error { return b.err }
