package boardtest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// SMTPMessage is one message an SMTPServer took.
type SMTPMessage struct {
	From string
	To   []string
	// Data: the message as sent, dot-unstuffed, lines ending in CRLF.
	Data []byte
	// User: who authenticated (AUTH PLAIN), "" for nobody.
	User string
	// TLS: whether the connection was TLS (STARTTLS) when it was sent.
	TLS bool
}

// SMTPServer is a small mail server for tests, on 127.0.0.1: it speaks
// EHLO/HELO, STARTTLS (when given a certificate), AUTH PLAIN, MAIL, RCPT,
// DATA (dot-unstuffed), RSET, NOOP and QUIT, keeps the messages it takes,
// and can be told to refuse or to hang.
type SMTPServer struct {
	// Addr is host:port.
	Addr string

	ln   net.Listener
	t    testing.TB
	done chan struct{}
	wg   sync.WaitGroup

	mu        sync.Mutex
	user      string
	pass      string
	tlsConfig *tls.Config
	rcptReply string
	dataReply string
	hang      bool
	msgs      []SMTPMessage
	tries     int
	authFails int
}

// StartSMTP starts a mail server on 127.0.0.1 until the test ends.
func StartSMTP(t testing.TB) *SMTPServer {
	return StartSMTPOn(t, "127.0.0.1:0")
}

// StartSMTPOn starts a mail server on addr until the test ends.
func StartSMTPOn(t testing.TB, addr string) *SMTPServer {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("smtp: listen: %v", err)
	}
	s := &SMTPServer{Addr: ln.Addr().String(), ln: ln, t: t, done: make(chan struct{})}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.Close)
	return s
}

// Close stops the server and ends its connections.
func (s *SMTPServer) Close() {
	select {
	case <-s.done:
		return
	default:
	}
	close(s.done)
	s.ln.Close()
	s.wg.Wait()
}

// URL is smtp://, user and password when given, and the address.
func (s *SMTPServer) URL(user, password string) string {
	u := url.URL{Scheme: "smtp", Host: s.Addr}
	if user != "" {
		u.User = url.UserPassword(user, password)
	}
	return u.String()
}

// RequireAuth makes the server want AUTH PLAIN with user and password
// before MAIL (535 for any other), and offer AUTH in its EHLO.
func (s *SMTPServer) RequireAuth(user, password string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.user, s.pass = user, password
}

// OfferTLS makes the server offer STARTTLS with a certificate for
// 127.0.0.1, and returns a pool that trusts it.
func (s *SMTPServer) OfferTLS() *x509.CertPool {
	certFile, keyFile, pool := selfSigned(s.t, s.t.TempDir())
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		s.t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	return pool
}

// RefuseRcpt makes the server answer each RCPT with reply ("550 no such
// user", "451 try later"); "" takes them again.
func (s *SMTPServer) RefuseRcpt(reply string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rcptReply = reply
}

// RefuseData makes the server answer the end of each DATA with reply; ""
// takes them again.
func (s *SMTPServer) RefuseData(reply string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dataReply = reply
}

// Hang makes the server accept connections and never say a word.
func (s *SMTPServer) Hang(hang bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hang = hang
}

// Messages is what the server took so far.
func (s *SMTPServer) Messages() []SMTPMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SMTPMessage(nil), s.msgs...)
}

// Tries is how many RCPT commands the server was sent.
func (s *SMTPServer) Tries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tries
}

func (s *SMTPServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				select {
				case <-s.done:
				case <-stop:
				}
				c.Close()
			}()
			s.serve(c)
		}()
	}
}

// session is one connection's state.
type session struct {
	conn   net.Conn
	r      *bufio.Reader
	w      *bufio.Writer
	tls    bool
	helo   bool
	user   string
	from   string
	to     []string
	inMail bool
}

func (ss *session) reply(format string, args ...any) bool {
	fmt.Fprintf(ss.w, format+"\r\n", args...)
	return ss.w.Flush() == nil
}

// line reads one line of at most 1000 bytes, without its CRLF.
func (ss *session) line() (string, error) {
	var b []byte
	for {
		part, more, err := ss.r.ReadLine()
		if err != nil {
			return "", err
		}
		b = append(b, part...)
		if len(b) > 1000 {
			return "", fmt.Errorf("line too long")
		}
		if !more {
			return string(b), nil
		}
	}
}

func (s *SMTPServer) serve(c net.Conn) {
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	s.mu.Lock()
	hang := s.hang
	s.mu.Unlock()
	if hang {
		select {
		case <-s.done:
		case <-time.After(time.Minute):
		}
		return
	}
	ss := &session{conn: c, r: bufio.NewReader(c), w: bufio.NewWriter(c)}
	if !ss.reply("220 test.smtp ESMTP ready") {
		return
	}
	for {
		l, err := ss.line()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(l, " ")
		switch strings.ToUpper(verb) {
		case "EHLO":
			ss.helo = true
			s.mu.Lock()
			lines := []string{"test.smtp greets " + arg, "8BITMIME", "SIZE 1048576"}
			if s.tlsConfig != nil && !ss.tls {
				lines = append(lines, "STARTTLS")
			}
			if s.user != "" {
				lines = append(lines, "AUTH PLAIN")
			}
			s.mu.Unlock()
			for i, x := range lines {
				sep := "-"
				if i == len(lines)-1 {
					sep = " "
				}
				fmt.Fprintf(ss.w, "250%s%s\r\n", sep, x)
			}
			if ss.w.Flush() != nil {
				return
			}
		case "HELO":
			ss.helo = true
			ss.reply("250 test.smtp")
		case "STARTTLS":
			s.mu.Lock()
			cfg := s.tlsConfig
			s.mu.Unlock()
			if cfg == nil || ss.tls {
				ss.reply("502 no STARTTLS here")
				continue
			}
			if !ss.reply("220 go ahead") {
				return
			}
			tc := tls.Server(c, cfg)
			if err := tc.Handshake(); err != nil {
				return
			}
			ss.conn, ss.r, ss.w, ss.tls = tc, bufio.NewReader(tc), bufio.NewWriter(tc), true
			ss.helo, ss.user, ss.from, ss.to, ss.inMail = false, "", "", nil, false
		case "AUTH":
			s.auth(ss, arg)
		case "MAIL":
			s.mu.Lock()
			needAuth := s.user != ""
			s.mu.Unlock()
			addr, ok := pathArg(arg, "FROM:")
			switch {
			case !ss.helo:
				ss.reply("503 EHLO first")
			case needAuth && ss.user == "":
				ss.reply("530 authentication required")
			case !ok:
				ss.reply("501 MAIL FROM:<address>")
			default:
				ss.from, ss.to, ss.inMail = addr, nil, true
				ss.reply("250 ok")
			}
		case "RCPT":
			addr, ok := pathArg(arg, "TO:")
			s.mu.Lock()
			s.tries++
			refuse := s.rcptReply
			s.mu.Unlock()
			switch {
			case !ss.inMail:
				ss.reply("503 MAIL first")
			case !ok:
				ss.reply("501 RCPT TO:<address>")
			case refuse != "":
				ss.reply("%s", refuse)
			default:
				ss.to = append(ss.to, addr)
				ss.reply("250 ok")
			}
		case "DATA":
			if len(ss.to) == 0 {
				ss.reply("503 RCPT first")
				continue
			}
			if !ss.reply("354 end with <CRLF>.<CRLF>") {
				return
			}
			data, err := ss.data()
			if err != nil {
				return
			}
			s.mu.Lock()
			refuse := s.dataReply
			if refuse == "" {
				s.msgs = append(s.msgs, SMTPMessage{From: ss.from, To: ss.to, Data: data, User: ss.user, TLS: ss.tls})
			}
			s.mu.Unlock()
			ss.from, ss.to, ss.inMail = "", nil, false
			if refuse != "" {
				ss.reply("%s", refuse)
			} else {
				ss.reply("250 taken")
			}
		case "RSET":
			ss.from, ss.to, ss.inMail = "", nil, false
			ss.reply("250 ok")
		case "NOOP":
			ss.reply("250 ok")
		case "QUIT":
			ss.reply("221 bye")
			return
		default:
			ss.reply("502 not here")
		}
	}
}

// auth takes AUTH PLAIN, with its response on the line or after a 334.
func (s *SMTPServer) auth(ss *session, arg string) {
	mech, resp, _ := strings.Cut(arg, " ")
	if !strings.EqualFold(mech, "PLAIN") {
		ss.reply("504 PLAIN only")
		return
	}
	if resp == "" {
		if !ss.reply("334 ") {
			return
		}
		var err error
		if resp, err = ss.line(); err != nil {
			return
		}
	}
	raw, err := base64.StdEncoding.DecodeString(resp)
	parts := bytes.Split(raw, []byte{0})
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || len(parts) != 3 || s.user == "" || string(parts[1]) != s.user || string(parts[2]) != s.pass {
		s.authFails++
		ss.reply("535 authentication failed")
		return
	}
	ss.user = s.user
	ss.reply("235 authenticated")
}

// data reads a message up to the line ".", dot-unstuffed.
func (ss *session) data() ([]byte, error) {
	var out bytes.Buffer
	for {
		l, err := ss.line()
		if err != nil {
			return nil, err
		}
		if l == "." {
			return out.Bytes(), nil
		}
		l = strings.TrimPrefix(l, ".") // dot-unstuffing
		if out.Len()+len(l) > 1<<20 {
			return nil, fmt.Errorf("message too large")
		}
		out.WriteString(l + "\r\n")
	}
}

// pathArg reads "FROM:<address>" or "TO:<address>", with any parameters
// after it.
func pathArg(arg, prefix string) (string, bool) {
	if len(arg) < len(prefix) || !strings.EqualFold(arg[:len(prefix)], prefix) {
		return "", false
	}
	rest := strings.TrimSpace(arg[len(prefix):])
	if !strings.HasPrefix(rest, "<") {
		return "", false
	}
	end := strings.IndexByte(rest, '>')
	if end < 0 {
		return "", false
	}
	return rest[1:end], true
}
