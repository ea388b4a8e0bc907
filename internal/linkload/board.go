package linkload

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/ent"
)

// loadBoard is the board under load: the board package on its own
// http.Server (board.Serve) over loopback, h2c or TLS, on an embedded
// SQLite store in a temporary folder.
type loadBoard struct {
	URL   string
	Store *ent.Client
	Board *board.Board
	// CA: for TLS, the PEM certificate agents must trust; otherwise empty.
	CA string
}

// startBoard runs a board until the test ends.
func startBoard(t testing.TB, pingInterval time.Duration, useTLS bool) *loadBoard {
	t.Helper()
	ctx := context.Background()
	store, err := board.OpenStore(ctx, board.SQLiteDSN(t.TempDir()))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { store.Close() })
	b, err := board.New(ctx, board.Config{Store: store, PingInterval: pingInterval})
	if err != nil {
		t.Fatalf("new board: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Close()
		t.Fatalf("listen: %v", err)
	}
	lb := &loadBoard{URL: "http://" + ln.Addr().String(), Store: store, Board: b}
	if useTLS {
		cert, ca, err := selfSigned()
		if err != nil {
			b.Close()
			ln.Close()
			t.Fatal(err)
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2"}})
		lb.URL, lb.CA = "https://"+ln.Addr().String(), ca
	}
	ctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- b.Serve(ctx, ln) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("board stopped with: %v", err)
		}
	})
	return lb
}

// selfSigned makes a certificate for 127.0.0.1 and returns it with its PEM.
func selfSigned() (tls.Certificate, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "linkload"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, "", err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
		string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), nil
}

// clientTLS is the TLS configuration that trusts caPEM, or nil without one.
func clientTLS(caPEM string) (*tls.Config, error) {
	if caPEM == "" {
		return nil, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(caPEM)) {
		return nil, errors.New("plan: bad CA certificate")
	}
	return &tls.Config{RootCAs: pool}, nil
}
