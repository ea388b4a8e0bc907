package library

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connecthttp"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
)

// MaxMessageBytes bounds one message read from the board: a chunk is at
// most 1 MiB, and a head holds the record, an envelope of at most 256 KiB
// and the scope's keys.
const MaxMessageBytes = 4 << 20

// Dial is a PackageService client for the board at boardURL (http://, HTTP/2
// without TLS, or https://), sending token with every call. tlsConfig nil
// means the system's roots. Nothing is sent until the first call.
func Dial(boardURL, token string, tlsConfig *tls.Config) (boardv1connect.PackageServiceClient, error) {
	u, err := url.Parse(boardURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("the board's URL: want http://HOST:PORT or https://HOST, without credentials, query or fragment")
	}
	if token == "" {
		return nil, errors.New("a token is required")
	}
	p := new(http.Protocols)
	if u.Scheme == "https" {
		p.SetHTTP1(true) // a proxy in front of the board may speak HTTP/1.1 only
		p.SetHTTP2(true)
	} else {
		p.SetUnencryptedHTTP2(true)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Protocols = p
	t.TLSClientConfig = tlsConfig
	t.HTTP2 = &http.HTTP2Config{SendPingTimeout: 15 * time.Second, PingTimeout: 10 * time.Second}
	hc := &http.Client{Transport: t}
	cc := connect.NewClient(connecthttp.NewTransport(hc, strings.TrimSuffix(u.String(), "/"), connecthttp.WithReadMaxBytes(MaxMessageBytes)), bearer(token))
	return boardv1connect.NewPackageServiceClient(cc), nil
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

// BoardError is the board refusing a download, or not answering as a
// board does.
type BoardError struct {
	// Ref is what was asked for.
	Ref Ref
	// Code is the RPC's code: connect.CodeNotFound for a package or
	// version the library does not hold, connect.CodeFailedPrecondition
	// for a yanked version named by its version, CodeUnauthenticated for
	// a token the board does not take.
	Code connect.Code
	Err  error
}

func (e *BoardError) Error() string {
	return fmt.Sprintf("download %s: %v", e.Ref, e.Err)
}

func (e *BoardError) Unwrap() error { return e.Err }

// boardError is err from a Download call, said for a person.
func boardError(ref Ref, err error) error {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return &BoardError{Ref: ref, Code: connect.CodeUnknown, Err: err}
	}
	if !ce.IsRemote() {
		cause := errors.Unwrap(ce)
		if cause == nil {
			cause = errors.New(ce.Message())
		}
		if errors.Is(cause, context.Canceled) || ce.Code() == connect.CodeCanceled {
			return context.Canceled
		}
		return &BoardError{Ref: ref, Code: ce.Code(), Err: fmt.Errorf("the board could not be reached or did not answer as a board does: %v", oneLine(cause.Error()))}
	}
	msg := oneLine(ce.Message())
	switch ce.Code() {
	case connect.CodeUnauthenticated:
		msg = "the board refused the token: " + msg
	case connect.CodePermissionDenied:
		msg = "the board refused: " + msg
	}
	return &BoardError{Ref: ref, Code: ce.Code(), Err: errors.New(msg)}
}

// oneLine is s on one line, at most 300 bytes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// download streams ref (or the version pinned by digest, when set) from
// the board into w: the head, then the archive's chunks, at most max
// bytes of them and exactly as many as the head's record says.
func download(ctx context.Context, client boardv1connect.PackageServiceClient, ref Ref, digest string, w io.Writer, max int64, silence time.Duration) (*boardv1.DownloadHead, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// The call ends when the board has sent nothing for silence.
	quiet := fmt.Errorf("the board sent nothing for %s: try again", silence)
	idle := time.AfterFunc(silence, func() { cancel(quiet) })
	defer idle.Stop()
	failed := func(err error) error {
		if context.Cause(ctx) == quiet {
			return &BoardError{Ref: ref, Code: connect.CodeDeadlineExceeded, Err: quiet}
		}
		return boardError(ref, err)
	}
	stream, err := client.Download(ctx, &boardv1.DownloadRequest{Name: ref.Name, Version: ref.Version, Digest: digest})
	if err != nil {
		return nil, failed(err)
	}
	defer stream.Close()
	first, err := stream.Receive()
	if errors.Is(err, io.EOF) {
		return nil, &BoardError{Ref: ref, Code: connect.CodeDataLoss, Err: errors.New("the board ended the download before it began")}
	}
	if err != nil {
		return nil, failed(err)
	}
	idle.Reset(silence)
	head := first.GetHead()
	if head == nil {
		return nil, &BoardError{Ref: ref, Code: connect.CodeDataLoss, Err: errors.New("the board sent the archive before saying what it is")}
	}
	size := head.GetVersion().GetSize()
	if size > max {
		return nil, &CheckError{Check: CheckArchive, Name: ref.Name, Err: fmt.Errorf("the archive is %d bytes: at most %d are installed", size, max)}
	}
	var n int64
	for {
		msg, err := stream.Receive()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, failed(err)
		}
		idle.Reset(silence)
		if msg.GetHead() != nil {
			return nil, &BoardError{Ref: ref, Code: connect.CodeDataLoss, Err: errors.New("the board sent a second head")}
		}
		chunk := msg.GetChunk()
		if n+int64(len(chunk)) > max {
			return nil, &CheckError{Check: CheckArchive, Name: ref.Name, Err: fmt.Errorf("the archive is over %d bytes: at most %d are installed", max, max)}
		}
		if _, err := w.Write(chunk); err != nil {
			return nil, err
		}
		n += int64(len(chunk))
	}
	if n != size {
		return nil, &BoardError{Ref: ref, Code: connect.CodeDataLoss, Err: fmt.Errorf("the download ended after %d bytes of %d: try again", n, size)}
	}
	return head, nil
}
