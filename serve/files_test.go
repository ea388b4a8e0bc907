package serve_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agent"
	"github.com/symphonix/symphonix/files"
	"github.com/symphonix/symphonix/serve"
)

// photoFlow takes a photo, has the model look at it, and answers with the
// photo and what was seen.
const photoFlow = `{
	"version": "0.9", "name": "photo-desk", "start": "look",
	"state": {
		"photo": { "type": "file", "accept": "image/*", "description": "The photo to look at." },
		"seen": { "type": "string" }
	},
	"inputs": ["photo"], "outputs": ["photo", "seen"],
	"nodes": [ { "id": "look", "type": "llm", "prompt": "What is in {{photo}}?", "output": "seen" } ],
	"edges": [ { "from": "look", "to": "END" } ]
}`

// askPhotoFlow asks for a photo once it has started.
const askPhotoFlow = `{
	"version": "0.9", "name": "ask-photo", "start": "ask",
	"state": {
		"topic": { "type": "string" },
		"photo": { "type": "file", "accept": "image/*" },
		"seen": { "type": "string" }
	},
	"inputs": ["topic"], "outputs": ["photo", "seen"],
	"nodes": [
		{ "id": "ask", "type": "ask", "ask": "Send me a photo of {{topic}}.", "output": "photo" },
		{ "id": "look", "type": "llm", "prompt": "What is in {{photo}}?", "output": "seen" }
	],
	"edges": [ { "from": "ask", "to": "look" }, { "from": "look", "to": "END" } ]
}`

// pngBytes is a 1×1 PNG.
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// openFlow opens src as an agent folder of the test's own.
func openFlow(t *testing.T, src string, cfg agent.Config) *agent.Agent {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := agent.Open(t.Context(), dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// fileServer serves a with the door on or off, its clock now.
func fileServer(t *testing.T, a *agent.Agent, monitored bool, now func() time.Time) *httptest.Server {
	t.Helper()
	s, err := serve.New(t.Context(), serve.Config{Agent: a, Conversations: filepath.Join(t.TempDir(), "c.json"), Monitored: monitored, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// upload posts body to /files?query as a browser's fetch would, with
// cookie when set, and answers the response and its body.
func upload(t *testing.T, ts *httptest.Server, cookie *http.Cookie, query url.Values, body io.Reader, size int64) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.URL+"/files?"+query.Encode(), body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", "image/png")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if cookie != nil {
		req.AddCookie(cookie)
	}
	return send(t, ts, req)
}

func send(t *testing.T, ts *httptest.Server, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

func q(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

func decodeFile(t *testing.T, b []byte) files.File {
	t.Helper()
	var f files.File
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	return f
}

// An upload is kept and served back as its sniffed type, safely; a
// message carrying its object reaches the run, whose model receives it.
func TestUploadServeAndRun(t *testing.T) {
	t.Parallel()
	ts := fileServer(t, openFlow(t, photoFlow, agent.Config{}), false, nil)
	res, b := upload(t, ts, nil, q("thread", "t1", "name", "cat.png", "channel", "photo"), bytes.NewReader(pngBytes), int64(len(pngBytes)))
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("POST /files = %d %s, want 201", res.StatusCode, b)
	}
	f := decodeFile(t, b)
	if f.MediaType != "image/png" || f.URL != "/files/"+f.ID || f.Bytes != int64(len(pngBytes)) || f.Name != "cat.png" {
		t.Errorf("POST /files = %+v", f)
	}

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL+f.URL, nil)
	res, b = send(t, ts, req)
	if res.StatusCode != http.StatusOK || !bytes.Equal(b, pngBytes) {
		t.Fatalf("GET %s = %d, %d bytes; want the PNG", f.URL, res.StatusCode, len(b))
	}
	for h, want := range map[string]string{
		"Content-Type":           "image/png",
		"X-Content-Type-Options": "nosniff",
		"Content-Disposition":    "inline; filename=cat.png",
	} {
		if got := res.Header.Get(h); got != want {
			t.Errorf("GET %s: %s = %q, want %q", f.URL, h, got, want)
		}
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "sandbox") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("GET %s: Content-Security-Policy = %q, want default-src 'none' and sandbox", f.URL, csp)
	}

	fj, _ := json.Marshal(f)
	tr := turn(t, ts, "/api/threads/t1/messages", `{"input": {"photo": `+string(fj)+`}}`)
	seen, _ := tr.State["seen"].(string)
	if !strings.Contains(seen, "received cat.png, image/png") {
		t.Errorf("seen = %q, want the model to have received cat.png, image/png", seen)
	}

	// Words, or the bytes, for a file channel are refused, naming it.
	for _, body := range []string{`{"input": {"photo": "iVBORw0KGgo="}}`, `{"input": {"photo": {"id": "x", "data": "iVBORw0KGgo="}}}`} {
		status, got := do(t, ts, http.MethodPost, "/api/threads/t2/messages", body)
		if status != http.StatusBadRequest || !strings.Contains(string(got), `"field":"input.photo"`) {
			t.Errorf("POST %s = %d %s, want 400 for input.photo", body, status, got)
		}
	}
	// A file object naming a file the store does not have is not found.
	ghost := strings.Replace(string(fj), f.ID[:8], "00000000", -1)
	if status, got := do(t, ts, http.MethodPost, "/api/threads/t3/messages", `{"input": {"photo": `+ghost+`}}`); status != http.StatusNotFound {
		t.Errorf("a message with an unknown file = %d %s, want 404", status, got)
	}
}

// HTML named cat.png is HTML: an image/* channel refuses it; without a
// channel it is kept as text/html and served only as an attachment.
func TestUploadSniffsTheBytes(t *testing.T) {
	t.Parallel()
	ts := fileServer(t, openFlow(t, photoFlow, agent.Config{}), false, nil)
	html := "<html><body><script>alert(document.cookie)</script></body></html>"
	res, b := upload(t, ts, nil, q("thread", "t1", "name", "cat.png", "channel", "photo"), strings.NewReader(html), int64(len(html)))
	if res.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(string(b), "text/html") {
		t.Errorf("POST /files (HTML as cat.png, channel photo) = %d %s, want 415 naming text/html", res.StatusCode, b)
	}
	res, b = upload(t, ts, nil, q("thread", "t1", "name", "cat.png"), strings.NewReader(html), int64(len(html)))
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("POST /files (HTML, no channel) = %d %s, want 201", res.StatusCode, b)
	}
	f := decodeFile(t, b)
	if !strings.HasPrefix(f.MediaType, "text/html") {
		t.Errorf("mediaType = %q, want text/html", f.MediaType)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL+f.URL, nil)
	res, _ = send(t, ts, req)
	if d := res.Header.Get("Content-Disposition"); !strings.HasPrefix(d, "attachment") {
		t.Errorf("GET %s: Content-Disposition = %q, want attachment", f.URL, d)
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "sandbox") {
		t.Errorf("GET %s: Content-Security-Policy = %q, want sandbox", f.URL, csp)
	}
	// A message carrying it for the photo channel is refused too.
	fj, _ := json.Marshal(f)
	if status, got := do(t, ts, http.MethodPost, "/api/threads/t1/messages", `{"input": {"photo": `+string(fj)+`}}`); status != http.StatusUnsupportedMediaType {
		t.Errorf("a message with HTML for photo = %d %s, want 415", status, got)
	}
}

// endless counts what is read of an endless body: by the client's
// writer, while the test reads the count.
type endless struct{ n atomic.Int64 }

func (e *endless) Read(p []byte) (int, error) {
	e.n.Add(int64(len(p)))
	return len(p), nil
}

// An upload over the limit is refused: at once when it says its size, at
// the limit when it does not, having read little past it.
func TestUploadOverTheLimit(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	a := openFlow(t, photoFlow, agent.Config{Files: files.Config{MaxFileBytes: limit}})
	ts := fileServer(t, a, false, nil)
	e := &endless{}
	res, b := upload(t, ts, nil, q("thread", "t1", "name", "big.png"), io.LimitReader(e, 1<<30), 1<<30)
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("POST /files of 1 GiB = %d %s, want 413", res.StatusCode, b)
	}
	// What the client pushes before it notices is the sockets' buffers,
	// a few MiB on loopback: far from the GiB it meant to send.
	if n := e.n.Load(); n > 64<<20 {
		t.Errorf("the client sent %d bytes of a refused upload, want it cut off early", n)
	}
	e = &endless{}
	res, b = upload(t, ts, nil, q("thread", "t1", "name", "big.png"), io.LimitReader(e, 1<<30), -1)
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("POST /files of 1 GiB, chunked = %d %s, want 413", res.StatusCode, b)
	}
	if a.Files.Total() != 0 {
		t.Errorf("the store holds %d bytes after refused uploads, want 0", a.Files.Total())
	}
}

// With the door on, a visitor reads only the files of threads they are
// in: another's file is 404, exactly as one that is not there, and a
// message cannot borrow it.
func TestFilesBehindTheDoor(t *testing.T) {
	t.Parallel()
	ts := fileServer(t, openFlow(t, photoFlow, agent.Config{}), true, nil)
	alice, bob := newBrowser(t, ts), newBrowser(t, ts)
	alice.do(http.MethodGet, "/api/agent", "") // a visitor cookie
	bob.do(http.MethodGet, "/api/agent", "")
	res, b := upload(t, ts, alice.cookie, q("thread", "alice-1", "name", "cat.png", "channel", "photo"), bytes.NewReader(pngBytes), int64(len(pngBytes)))
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("alice's upload = %d %s", res.StatusCode, b)
	}
	f := decodeFile(t, b)
	if status, got := alice.do(http.MethodGet, f.URL, ""); status != http.StatusOK || !bytes.Equal(got, pngBytes) {
		t.Errorf("alice GET %s = %d, want 200 and the PNG", f.URL, status)
	}
	status, theirs := bob.do(http.MethodGet, f.URL, "")
	ghost := "/files/" + strings.Repeat("0", 64) + ".png"
	status2, missing := bob.do(http.MethodGet, ghost, "")
	if status != http.StatusNotFound || status2 != http.StatusNotFound || !bytes.Equal(theirs, missing) {
		t.Errorf("bob GET alice's file = %d %s, a missing one = %d %s; want the same 404", status, theirs, status2, missing)
	}
	// Bob cannot upload into alice's thread, nor send her file in his.
	if res, b := upload(t, ts, bob.cookie, q("thread", "alice-1", "name", "x.png"), bytes.NewReader(pngBytes), int64(len(pngBytes))); res.StatusCode != http.StatusNotFound {
		t.Errorf("bob's upload to alice's thread = %d %s, want 404", res.StatusCode, b)
	}
	fj, _ := json.Marshal(f)
	if status, got := bob.do(http.MethodPost, "/api/threads/bob-1/messages", `{"input": {"photo": `+string(fj)+`}}`); status != http.StatusNotFound {
		t.Errorf("bob's message with alice's file = %d %s, want 404", status, got)
	}
	if status, _ := bob.do(http.MethodGet, f.URL, ""); status != http.StatusNotFound {
		t.Errorf("bob GET alice's file after trying to borrow it = %d, want 404", status)
	}
	// An upload from another site is refused like any other POST.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.URL+"/files?"+q("thread", "x", "name", "a.png").Encode(), bytes.NewReader(pngBytes))
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if res, _ := send(t, ts, req); res.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site upload = %d, want 403", res.StatusCode)
	}
}

// An id that is a path is refused as not an id.
func TestFileIDThatIsAPath(t *testing.T) {
	t.Parallel()
	ts := fileServer(t, openFlow(t, photoFlow, agent.Config{}), false, nil)
	for _, path := range []string{"/files/..%2F..%2Fflow.json", "/files/..%2Fconversations.json", "/files/" + strings.Repeat("a", 64) + ".png%2F..%2F..%2Fflow.json"} {
		status, b := do(t, ts, http.MethodGet, path, "")
		if status != http.StatusBadRequest || !strings.Contains(string(b), `"field":"id"`) {
			t.Errorf("GET %s = %d %s, want 400 for id", path, status, b)
		}
	}
}

// One visitor may upload UploadsPerMinute files a minute.
func TestUploadRate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	ts := fileServer(t, openFlow(t, photoFlow, agent.Config{}), false, func() time.Time { return now })
	for i := range serve.UploadsPerMinute {
		if res, b := upload(t, ts, nil, q("thread", "t1", "name", "cat.png"), bytes.NewReader(pngBytes), int64(len(pngBytes))); res.StatusCode != http.StatusCreated {
			t.Fatalf("upload %d = %d %s", i+1, res.StatusCode, b)
		}
	}
	res, b := upload(t, ts, nil, q("thread", "t1", "name", "cat.png"), bytes.NewReader(pngBytes), int64(len(pngBytes)))
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Errorf("upload %d = %d %s, want 429 with Retry-After", serve.UploadsPerMinute+1, res.StatusCode, b)
	}
	now = now.Add(time.Minute)
	if res, b := upload(t, ts, nil, q("thread", "t1", "name", "cat.png"), bytes.NewReader(pngBytes), int64(len(pngBytes))); res.StatusCode != http.StatusCreated {
		t.Errorf("an upload a minute later = %d %s, want 201", res.StatusCode, b)
	}
}

// An ask that expects a file takes the uploaded file's object, and
// refuses words, with the run still waiting.
func TestAskForAFileAnswered(t *testing.T) {
	t.Parallel()
	ts := fileServer(t, openFlow(t, askPhotoFlow, agent.Config{}), false, nil)
	tr := turn(t, ts, "/api/threads/t1/messages", `{"text": "cats"}`)
	if tr.Pending == nil || tr.Pending.Expects != "file" || tr.Pending.Accept != "image/*" {
		t.Fatalf("turn = %+v, want it waiting for an image file", tr)
	}
	if status, b := do(t, ts, http.MethodPost, "/api/threads/t1/answer", `{"answer": "a tabby"}`); status != http.StatusBadRequest || !strings.Contains(string(b), `"field":"answer"`) {
		t.Errorf("answering words = %d %s, want 400 for answer", status, b)
	}
	res, b := upload(t, ts, nil, q("thread", "t1", "name", "tabby.png", "channel", "photo"), bytes.NewReader(pngBytes), int64(len(pngBytes)))
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("upload = %d %s", res.StatusCode, b)
	}
	tr = turn(t, ts, "/api/threads/t1/answer", `{"answer": `+string(b)+`}`)
	if seen, _ := tr.State["seen"].(string); !strings.Contains(seen, "received tabby.png, image/png") {
		t.Errorf("seen = %q, want the model to have received tabby.png", seen)
	}
}

// The page may draw the agent's own images, audio and video, and nothing
// from elsewhere.
func TestPagePolicyAllowsOwnMedia(t *testing.T) {
	t.Parallel()
	ts := fileServer(t, openFlow(t, photoFlow, agent.Config{}), false, nil)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL+"/", nil)
	res, _ := send(t, ts, req)
	csp := res.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "img-src 'self'", "media-src 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("GET /: Content-Security-Policy = %q, want %s", csp, want)
		}
	}
}
