package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/setting"
)

// publicURLKey is the setting in which a board records, each time it
// starts, the public URL its links use, so that the commands run beside
// it (board user add) print links that work.
const publicURLKey = "board.public_url"

// checkPublicURL checks a public URL given by hand: http or https, a host,
// no user, query or fragment. It returns it without a trailing slash.
func checkPublicURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("not a URL: %w", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("%q: want an http:// or https:// URL", s)
	case u.Host == "":
		return "", fmt.Errorf("%q: no host", s)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return "", fmt.Errorf("%q: want scheme, host and path only", s)
	}
	return strings.TrimSuffix(s, "/"), nil
}

// listenURL is the board's URL made from the address it was told to
// listen on (listen) and the port it got (addr, for :0), with a host a
// browser can open: every interface ("", 0.0.0.0, [::]) includes
// loopback, so it becomes 127.0.0.1 (IPv4) or localhost.
func listenURL(scheme, listen string, addr net.Addr) string {
	_, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return scheme + "://" + addr.String()
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		host, _, _ = net.SplitHostPort(addr.String())
	}
	if host == "" {
		host = "localhost"
	} else if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
		if ip.To4() != nil {
			host = "127.0.0.1"
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// recordPublicURL keeps the board's public URL in the store.
func recordPublicURL(ctx context.Context, db *ent.Client, u string) error {
	err := db.Setting.Create().
		SetID(publicURLKey).
		SetValue(u).
		SetUpdatedAt(time.Now()).
		SetUpdatedBy("board").
		OnConflictColumns(setting.FieldID).
		UpdateNewValues().
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("record the public URL: %w", err)
	}
	return nil
}

// errNoPublicURL: no URL was given and no board has recorded one.
var errNoPublicURL = errors.New("--url: the board's public URL is not known: start the board once on this store (it records its URL), or pass --url (env SYMPHONIX_PUBLIC_URL)")

// recordedPublicURL is the public URL the board last started with.
func recordedPublicURL(ctx context.Context, db *ent.Client) (string, error) {
	row, err := db.Setting.Get(ctx, publicURLKey)
	if ent.IsNotFound(err) || err == nil && row.Value == "" {
		return "", errNoPublicURL
	}
	if err != nil {
		return "", err
	}
	return row.Value, nil
}
