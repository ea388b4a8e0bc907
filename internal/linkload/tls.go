package linkload

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
)

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
