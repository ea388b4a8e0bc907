package boardtest

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connecthttp"

	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
)

// AddUser adds a person with a role and, unless password is "", sets their
// password through their one-time setup link, as they would themselves.
func (b *Board) AddUser(email string, role identity.Role, password string) identity.User {
	b.t.Helper()
	ctx := context.Background()
	u, link, err := b.Board.Users().Add(ctx, identity.AddUser{Email: email, Name: email, Role: role, Actor: "test"})
	if err != nil {
		b.t.Fatalf("add user %s: %v", email, err)
	}
	if password == "" {
		return u
	}
	u, err = b.Board.Users().Setup(ctx, identity.Setup{Token: link.Token, Password: password})
	if err != nil {
		b.t.Fatalf("set password of %s: %v", email, err)
	}
	return u
}

// SignIn signs in over HTTP (POST /auth/signin) and returns the session
// cookie's value and the CSRF token; it fails the test unless the board
// answers 200.
func (b *Board) SignIn(email, password string) (cookie, csrf string) {
	b.t.Helper()
	resp, body := b.PostJSON("/auth/signin", map[string]string{"email": email, "password": password}, "", "")
	if resp.StatusCode != http.StatusOK {
		b.t.Fatalf("sign in as %s: %s %s", email, resp.Status, body)
	}
	for _, c := range resp.Cookies() {
		if c.Name == board.SessionCookie {
			cookie = c.Value
		}
	}
	var out struct {
		CSRFToken string `json:"csrfToken"` // Session.csrf_token
	}
	if err := json.Unmarshal(body, &out); err != nil || cookie == "" || out.CSRFToken == "" {
		b.t.Fatalf("sign in as %s: no cookie or csrf token in %s (%v)", email, body, err)
	}
	return cookie, out.CSRFToken
}

// PostJSON posts v as JSON to path on the board, with a session cookie and
// CSRF header when they are not "", and returns the response and its body.
func (b *Board) PostJSON(path string, v any, cookie, csrf string) (*http.Response, []byte) {
	b.t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		b.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, b.URL+path, bytes.NewReader(data))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	setSession(req.Header, cookie, csrf)
	return b.Do(req)
}

// Do sends req over the board's HTTP client and reads the whole body.
func (b *Board) Do(req *http.Request) (*http.Response, []byte) {
	b.t.Helper()
	resp, err := b.HTTPClient().Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return resp, body
}

// HTTPClient is a plain HTTP client for the board (HTTP/2, h2c or TLS).
func (b *Board) HTTPClient() *http.Client {
	return httpClient(b.TLSConfig())
}

// SessionClient is a connect client for the board that sends a session
// cookie and, when csrf is not "", the CSRF header, as a browser would.
func (b *Board) SessionClient(cookie, csrf string, opts ...connecthttp.Option) *connect.Client {
	hc := httpClient(b.TLSConfig())
	return connect.NewClient(connecthttp.NewTransport(hc, b.URL, opts...), headers(func(h *connect.Header) {
		if cookie != "" {
			h.Set("Cookie", board.SessionCookie+"="+cookie)
		}
		if csrf != "" {
			h.Set(board.CSRFHeader, csrf)
		}
	}))
}

// Users is a UserService client sending token (a bearer token).
func (b *Board) Users(token string, opts ...connecthttp.Option) boardv1connect.UserServiceClient {
	return boardv1connect.NewUserServiceClient(b.Client(token, opts...))
}

func setSession(h http.Header, cookie, csrf string) {
	if cookie != "" {
		h.Set("Cookie", board.SessionCookie+"="+cookie)
	}
	if csrf != "" {
		h.Set(board.CSRFHeader, csrf)
	}
}

func headers(set func(*connect.Header)) connect.ClientInterceptor {
	return func(next connect.ClientFunc) connect.ClientFunc {
		return func(ctx context.Context, spec connect.Spec) (connect.ClientStream, error) {
			info, ok := connect.CallInfoForClientContext(ctx)
			if !ok {
				ctx, info = connect.NewClientContext(ctx)
			}
			set(info.RequestHeader())
			return next(ctx, spec)
		}
	}
}

func httpClient(tlsConfig *tls.Config) *http.Client {
	p := new(http.Protocols)
	if tlsConfig != nil {
		p.SetHTTP2(true)
	} else {
		p.SetUnencryptedHTTP2(true)
	}
	return &http.Client{Transport: &http.Transport{Protocols: p, TLSClientConfig: tlsConfig}}
}
