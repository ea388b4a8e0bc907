package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connecthttp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/internal/cli"
)

// defaultBoardURL is where the operator commands look for a board when
// neither --board nor SYMPHONIX_BOARD says: the address `board` listens on
// by default.
const defaultBoardURL = "http://127.0.0.1:7777"

// Bounds of what the operator commands read from files.
const (
	// maxTokenFileBytes is the most a --token-file may hold: a token is a
	// few hundred bytes (the agent's --token-file takes as much).
	maxTokenFileBytes = 64 << 10
	// maxCAFileBytes is the most a --ca-file may hold.
	maxCAFileBytes = 1 << 20
	// maxReadBytes is the largest message read from the board: twice the
	// 4 MiB a page of any list stops at (board.MaxListBytes).
	maxReadBytes = 8 << 20
)

// The HTTP/2 pings on a connection that has been quiet, and how long an
// answer may take before the connection is taken for dead.
const (
	pingEvery   = 15 * time.Second
	pingTimeout = 10 * time.Second
)

// watchSilence is how long approvals watch waits for any message, the
// board's heartbeats included (one every 15 s or so), before it takes the
// watch for lost: three heartbeats, as the API says.
const watchSilence = 45 * time.Second

// clientOptions say which board the operator commands talk to and how.
// Board, TokenFile and CAFile come from flags (or their environment
// variables); Token from SYMPHONIX_TOKEN.
type clientOptions struct {
	// Board: the board's URL; "" is defaultBoardURL.
	Board string
	// Token: the token itself, from SYMPHONIX_TOKEN. Never from argv, where
	// any user of the machine can read it (ps).
	Token string
	// TokenFile: a file holding the token; wins over Token when set
	// (app.dial decides which of the two counts).
	TokenFile string
	// CAFile: PEM certificates trusted for an https board, besides the
	// system's roots.
	CAFile string
}

// boardClient is a running board's API, as the operator commands use it.
type boardClient struct {
	url       string
	h2c       bool          // http://: HTTP/2 without TLS
	silence   time.Duration // watchSilence; shorter in tests
	agents    boardv1connect.AgentServiceClient
	approvals boardv1connect.ApprovalServiceClient
	tools     boardv1connect.ToolServiceClient
	audit     boardv1connect.AuditServiceClient
	packages  boardv1connect.PackageServiceClient
	triggers  boardv1connect.TriggerServiceClient
	evals     boardv1connect.EvalServiceClient
	runs      boardv1connect.RunServiceClient
	alerts    boardv1connect.AlertServiceClient
}

// dial checks o and returns a client for the board it names. Nothing is
// sent until the first call.
func (o clientOptions) dial() (*boardClient, error) {
	base, err := boardURL(o.Board)
	if err != nil {
		return nil, err
	}
	token, err := o.token()
	if err != nil {
		return nil, err
	}
	var tlsConfig *tls.Config
	if base.Scheme == "https" {
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		if o.CAFile != "" {
			pool, err := caPool(o.CAFile)
			if err != nil {
				return nil, err
			}
			tlsConfig.RootCAs = pool
		}
	} else if o.CAFile != "" {
		return nil, cli.Usagef("--ca-file: only for an https board; --board is %s", base.Redacted())
	}
	hc := &http.Client{Transport: boardOnly{next: transport(tlsConfig)}}
	u := strings.TrimSuffix(base.String(), "/")
	cc := connect.NewClient(connecthttp.NewTransport(hc, u, connecthttp.WithReadMaxBytes(maxReadBytes)), bearer(token))
	return &boardClient{
		url:       u,
		h2c:       base.Scheme == "http",
		silence:   watchSilence,
		agents:    boardv1connect.NewAgentServiceClient(cc),
		approvals: boardv1connect.NewApprovalServiceClient(cc),
		tools:     boardv1connect.NewToolServiceClient(cc),
		audit:     boardv1connect.NewAuditServiceClient(cc),
		packages:  boardv1connect.NewPackageServiceClient(cc),
		triggers:  boardv1connect.NewTriggerServiceClient(cc),
		evals:     boardv1connect.NewEvalServiceClient(cc),
		runs:      boardv1connect.NewRunServiceClient(cc),
		alerts:    boardv1connect.NewAlertServiceClient(cc),
	}, nil
}

// boardURL reads --board: http or https, a host, nothing else that could
// leak or surprise (credentials, a query).
func boardURL(s string) (*url.URL, error) {
	if s == "" {
		s = defaultBoardURL
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		shown := strconv.Quote(s)
		if strings.Contains(s, "@") {
			shown = "the URL given" // it may hold a password
		}
		return nil, cli.Usagef("--board: %s is not a board's URL: want http://HOST:PORT or https://HOST", shown)
	}
	if u.User != nil {
		return nil, cli.Usagef("--board: no credentials in the URL: set SYMPHONIX_TOKEN or --token-file")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, cli.Usagef("--board: %s: no query or fragment, only scheme, host and path", u.Redacted())
	}
	return u, nil
}

// token is the operator token: from --token-file when set, otherwise from
// SYMPHONIX_TOKEN.
func (o clientOptions) token() (string, error) {
	what, tok := "SYMPHONIX_TOKEN", o.Token
	if o.TokenFile != "" {
		what = "--token-file " + o.TokenFile
		b, err := readTokenFile(o.TokenFile)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		tok = string(b)
	}
	tok = strings.TrimSpace(tok)
	if tok == "" {
		if o.TokenFile != "" {
			return "", cli.Usagef("%s: the file is empty: put the operator token in it (board token operator)", what)
		}
		return "", cli.Usagef("no token: set SYMPHONIX_TOKEN or --token-file to an operator token (board token operator)")
	}
	for _, r := range tok {
		if r <= ' ' || r >= 0x7f {
			return "", cli.Usagef("%s: not a token (it holds spaces or control characters)", what)
		}
	}
	return tok, nil
}

// readTokenFile reads a token file: its owner's alone (on Unix, no
// permission for group or others), as the agent's --token-file is.
func readTokenFile(path string) ([]byte, error) {
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		if err != nil {
			return nil, pathError(err)
		}
		if m := fi.Mode().Perm(); m&0o077 != 0 {
			return nil, fmt.Errorf("%s can be read by other users (mode %v): run chmod 600 %s", path, m, path)
		}
	}
	return readBounded(path, maxTokenFileBytes)
}

// readBounded reads a whole file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, pathError(err)
	}
	defer f.Close()
	return readAllBounded(f, limit, path)
}

// readAllBounded reads all of r, at most limit bytes; name names r in
// errors.
func readAllBounded(r io.Reader, limit int64, name string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, pathError(err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, limit)
	}
	return b, nil
}

// pathError is err without Go's operation prefix: "x: no such file or
// directory" rather than "open x: no such file or directory".
func pathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}

// caPool is the system's roots plus the PEM certificates in path.
func caPool(path string) (*x509.CertPool, error) {
	b, err := readBounded(path, maxCAFileBytes)
	if err != nil {
		return nil, fmt.Errorf("--ca-file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(b) {
		return nil, cli.Usagef("--ca-file: %s: no PEM certificate in it", path)
	}
	return pool, nil
}

// transport speaks HTTP/2 to the board: over TLS (with HTTP/1.1 as
// fallback, for a proxy in front of it) for https, and h2c for http, as
// the board serves on loopback. Connect's streams work on either.
func transport(tlsConfig *tls.Config) *http.Transport {
	p := new(http.Protocols)
	if tlsConfig != nil {
		p.SetHTTP1(true)
		p.SetHTTP2(true)
	} else {
		p.SetUnencryptedHTTP2(true)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Protocols = p
	// A watch is a long stream: a connection that died without a word (a
	// dead NAT, a pulled cable) is found by HTTP/2 pings, as the link's is.
	t.HTTP2 = &http.HTTP2Config{SendPingTimeout: pingEvery, PingTimeout: pingTimeout}
	t.TLSClientConfig = tlsConfig
	t.Proxy = http.ProxyFromEnvironment
	return t
}

// bearer sends the token with every call.
func bearer(token string) connect.ClientInterceptor {
	return func(next connect.ClientFunc) connect.ClientFunc {
		return func(ctx context.Context, spec connect.Spec) (connect.ClientStream, error) {
			info, ok := connect.CallInfoForClientContext(ctx)
			if !ok {
				ctx, info = connect.NewClientContext(ctx)
			}
			info.RequestHeader().Set("Authorization", "Bearer "+token)
			return next(ctx, spec)
		}
	}
}

// boardOnly refuses a response that is not an RPC's: whatever answered is
// not a board (a web server's 404 page, a proxy's error page), and saying
// so is clearer than the protocol error the client would make of it.
type boardOnly struct {
	next http.RoundTripper
}

// rpcContentTypes are the media types the board answers RPCs with: the
// Connect protocol's (unary, streaming, and errors as JSON) and gRPC's.
var rpcContentTypes = []string{"application/proto", "application/json", "application/connect+", "application/grpc"}

func (b boardOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := b.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	ct := res.Header.Get("Content-Type")
	media, _, _ := mime.ParseMediaType(ct)
	for _, p := range rpcContentTypes {
		if strings.HasPrefix(media, p) {
			return res, nil
		}
	}
	// A little of the body helps name what answered; the rest is dropped.
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	return nil, &notBoardError{status: res.Status, contentType: media}
}

// notBoardError is an HTTP answer that is not an RPC's.
type notBoardError struct {
	status      string
	contentType string
}

func (e *notBoardError) Error() string {
	if e.contentType == "" {
		return "HTTP " + e.status
	}
	return fmt.Sprintf("HTTP %s (%s)", e.status, e.contentType)
}

// explain turns an error from a call to the board into one line that says
// what went wrong and what to do, never a protocol dump. what names the
// call's subject ("approval 123"); "" for none.
func (c *boardClient) explain(err error, what string) error {
	if err == nil {
		return nil
	}
	prefix := ""
	if what != "" {
		prefix = what + ": "
	}
	var nb *notBoardError
	if errors.As(err, &nb) {
		return fmt.Errorf("%s is not a Symphonix board: %v; check --board or SYMPHONIX_BOARD", c.url, nb)
	}
	ce, ok := errors.AsType[*connect.Error](err)
	if !ok {
		return fmt.Errorf("%s%w", prefix, err)
	}
	if !ce.IsRemote() {
		return c.explainLocal(ce)
	}
	msg := oneLine(sanitize(ce.Message(), false))
	if msg == "" {
		msg = ce.Code().String()
	}
	switch ce.Code() {
	case connect.CodeUnauthenticated:
		return fmt.Errorf("the board refused the token: %s; set SYMPHONIX_TOKEN or --token-file to a valid operator token", msg)
	case connect.CodePermissionDenied:
		return fmt.Errorf("%sthe board refused: %s (the token's role may not do this)", prefix, msg)
	case connect.CodeUnimplemented:
		return fmt.Errorf("%s does not offer this (%s): is it an older board, or not a Symphonix board?", c.url, msg)
	case connect.CodeInternal, connect.CodeUnknown, connect.CodeDataLoss:
		return fmt.Errorf("%sthe board failed (%s); its log says more", prefix, msg)
	case connect.CodeUnavailable:
		return fmt.Errorf("%sthe board is busy or going away (%s): try again", prefix, msg)
	default:
		if what != "" && strings.HasPrefix(msg, strings.Fields(what)[0]) {
			prefix = "" // the board's message names it already: `approval "x": not found`
		}
		return fmt.Errorf("%s%s", prefix, msg)
	}
}

// explainLocal explains an error the client made itself: the board could
// not be reached, or did not speak the protocol.
func (c *boardClient) explainLocal(ce *connect.Error) error {
	cause := errors.Unwrap(ce)
	if cause == nil {
		cause = errors.New(ce.Message())
	}
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var ve *tls.CertificateVerificationError
	var op *net.OpError
	switch {
	case errors.Is(cause, context.Canceled):
		return context.Canceled // interrupted
	case ce.Code() == connect.CodeResourceExhausted:
		return fmt.Errorf("%s sent a message larger than %d MiB, more than a board sends: %s", c.url, maxReadBytes>>20, oneLine(ce.Message()))
	case ce.Code() == connect.CodeDeadlineExceeded:
		return fmt.Errorf("%s did not answer in time", c.url)
	case errors.As(cause, &ua), errors.As(cause, &ve) && errors.As(ve.Err, &ua):
		return fmt.Errorf("%s: the board's certificate is not signed by a trusted authority: pass --ca-file with its CA", c.url)
	case errors.As(cause, &hn):
		return fmt.Errorf("%s: the board's certificate is not for this host (%v)", c.url, hn)
	case errors.As(cause, &ci):
		return fmt.Errorf("%s: the board's certificate is not valid (%v)", c.url, ci)
	case errors.As(cause, &op) && op.Op == "dial":
		return fmt.Errorf("cannot reach the board at %s (%v): is it running? check --board or SYMPHONIX_BOARD", c.url, op.Err)
	case c.h2c && notH2C(cause):
		return fmt.Errorf("%s is not a Symphonix board: it does not speak HTTP/2 (it answers HTTP/1.1 only, or drops the connection), and a board speaks HTTP/2 on http://; check --board or SYMPHONIX_BOARD", c.url)
	case ce.Code() == connect.CodeCanceled:
		return context.Canceled
	case ce.Code() == connect.CodeUnavailable || ce.Code() == connect.CodeUnknown:
		return fmt.Errorf("%s is not a Symphonix board, or not reachable: %s; check --board or SYMPHONIX_BOARD", c.url, oneLine(cause.Error()))
	default:
		return fmt.Errorf("%s did not answer as a Symphonix board does: %s; check --board or SYMPHONIX_BOARD", c.url, oneLine(ce.Message()))
	}
}

// notH2C reports whether err is net/http's h2c client failing on a server
// that speaks HTTP/1.1 only, once connected: the server drops the
// connection on HTTP/2's preface (a broken pipe, a reset), or answers it
// in HTTP/1.1. Which comes depends on timing; the last two have no type of
// their own (net/http makes them with fmt.Errorf), so their words are all
// there is to go by, as connect's own h2c hint does.
func notH2C(err error) bool {
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "looked like an HTTP/1.1 header") || strings.Contains(s, "http2: client conn could not be established")
}

// oneLine is s on one line, at most 300 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}

// maxLimit is the most --limit may ask for: every list is read in pages,
// but what is printed is held in memory first.
const maxLimit = 10000

// checkLimit reads --limit.
func checkLimit(n int) error {
	if n < 1 || n > maxLimit {
		return cli.Usagef("--limit: %d, want 1 to %d", n, maxLimit)
	}
	return nil
}

// pageSize is how many of the remaining items to ask one page for.
func pageSize(remaining, most int) int32 {
	return int32(min(remaining, most))
}

// readPages reads a list from the board a page at a time, each of at most
// most items, until it has limit items or the board has no more; more
// says the board had more than limit. page asks for one page.
func readPages[T any](limit, most int, page func(size int32, token string) (items []T, next string, err error)) (items []T, more bool, err error) {
	token := ""
	for {
		got, next, err := page(pageSize(limit-len(items), most), token)
		if err != nil {
			return nil, false, err
		}
		items = append(items, got...)
		token = next
		if len(items) >= limit {
			return items[:limit], token != "" || len(items) > limit, nil
		}
		if token == "" {
			return items, false, nil
		}
	}
}

// clientFlags registers the flags of every command that talks to a running
// board: --board, --token-file and --ca-file (each with its SYMPHONIX_
// environment variable). The token itself is never a flag: argv is
// readable by every user of the machine.
func clientFlags(fs *pflag.FlagSet) *clientOptions {
	o := &clientOptions{}
	fs.StringVar(&o.Board, "board", defaultBoardURL, "the running board's URL (env SYMPHONIX_BOARD)")
	fs.StringVar(&o.TokenFile, "token-file", "", "a file holding the operator token; without it, SYMPHONIX_TOKEN (env SYMPHONIX_TOKEN_FILE)")
	fs.StringVar(&o.CAFile, "ca-file", "", "PEM certificates to trust for an https board, besides the system's roots (env SYMPHONIX_CA_FILE)")
	return o
}

// dial is a client for the board o names. The token comes from --token-file
// or SYMPHONIX_TOKEN, the stronger source winning as for any flag (the
// command line, then the environment, then the config file); both from
// the environment is a usage error, as the agent's --token and
// --token-file from one place are.
func (a *app) dial(o *clientOptions) (*boardClient, error) {
	o.Token = a.getenv("SYMPHONIX_TOKEN")
	if o.Token != "" && o.TokenFile != "" {
		switch a.root.Config.Source("token-file") {
		case cli.FromEnv:
			return nil, cli.Usagef("SYMPHONIX_TOKEN and SYMPHONIX_TOKEN_FILE: set one of them, not both")
		case cli.FromFile:
			o.TokenFile = "" // the environment is stronger than the config file
		}
	}
	return o.dial()
}

// limitFlag registers --limit on a list command.
func limitFlag(c *cobra.Command, limit *int) {
	c.Flags().IntVar(limit, "limit", 100, fmt.Sprintf("print at most this many (1 to %d)", maxLimit))
}

// more tells, on stderr, that a list was cut at --limit.
func (a *app) more(more bool, limit int) {
	if more {
		fmt.Fprintf(a.stderr, "board: more than %d; pass --limit (at most %d) to see more\n", limit, maxLimit)
	}
}

// jsonLine writes one JSON value on one line, as watches print each event.
func jsonLine(w io.Writer, v json.RawMessage) error {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return err
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

// watchEnd is how a watch ends: nil when interrupted (ctx), otherwise why
// the board ended it.
func watchEnd(ctx context.Context, bc *boardClient, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	if errors.Is(err, errSilent) {
		return err
	}
	if errors.Is(err, io.EOF) {
		return errors.New("the board ended the watch: watch again")
	}
	return bc.explain(err, "watch")
}
