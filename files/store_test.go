package files_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/files"
)

// png is a 1×1 PNG.
var png = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

func open(t *testing.T, cfg files.Config) (*files.Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "files")
	s, err := files.Open(dir, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func TestSaveAndRead(t *testing.T) {
	t.Parallel()
	s, _ := open(t, files.Config{})
	f, err := s.Save(bytes.NewReader(png), files.Upload{Name: "cat.png", Accept: "image/*", Thread: "t1"})
	if err != nil {
		t.Fatalf("Save: %v", err)
	}
	if err := files.ValidID(f.ID); err != nil || !strings.HasSuffix(f.ID, ".png") {
		t.Errorf("Save: id %q (%v), want 64 hex digits and .png", f.ID, err)
	}
	want := files.File{ID: f.ID, Name: "cat.png", MediaType: "image/png", URL: "/files/" + f.ID, Bytes: int64(len(png))}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("Save (-want +got):\n%s", diff)
	}
	got, err := s.Read(t.Context(), f.ID)
	if err != nil || !bytes.Equal(got, png) {
		t.Errorf("Read = %d bytes, %v; want the PNG", len(got), err)
	}
	m, err := s.Meta(f.ID)
	if err != nil || !cmp.Equal(m.Threads, []string{"t1"}) {
		t.Errorf("Meta = %+v, %v; want threads [t1]", m, err)
	}
	if s.Total() != int64(len(png)) {
		t.Errorf("Total = %d, want %d", s.Total(), len(png))
	}

	// The same bytes again, for another thread: the same file, in both.
	again, err := s.Save(bytes.NewReader(png), files.Upload{Name: "other.png", Thread: "t2"})
	if err != nil || again.ID != f.ID || again.Name != "other.png" {
		t.Fatalf("Save again = %+v, %v; want id %s named other.png", again, err, f.ID)
	}
	if m, _ := s.Meta(f.ID); !cmp.Equal(m.Threads, []string{"t1", "t2"}) {
		t.Errorf("Meta.Threads = %v, want [t1 t2]", m.Threads)
	}
	if s.Total() != int64(len(png)) {
		t.Errorf("Total after the same file = %d, want %d", s.Total(), len(png))
	}
}

// A file's type is its bytes': HTML named cat.png and sent as image/png is
// HTML, and an image/* channel refuses it.
func TestSaveSniffsNeverTrustsName(t *testing.T) {
	t.Parallel()
	s, _ := open(t, files.Config{})
	html := []byte("<html><script>alert(1)</script></html>")
	_, err := s.Save(bytes.NewReader(html), files.Upload{Name: "cat.png", Declared: "image/png", Accept: "image/*"})
	if !errors.Is(err, files.ErrNotAccepted) {
		t.Fatalf("Save(HTML as cat.png, accept image/*) = %v, want ErrNotAccepted", err)
	}
	if !strings.Contains(err.Error(), "text/html") {
		t.Errorf("Save error %q does not say the file is text/html", err)
	}
	f, err := s.Save(bytes.NewReader(html), files.Upload{Name: "cat.png", Declared: "image/png"})
	if err != nil {
		t.Fatalf("Save(HTML as cat.png) = %v", err)
	}
	if f.MediaType != "text/html; charset=utf-8" || !strings.HasSuffix(f.ID, ".html") {
		t.Errorf("Save(HTML as cat.png) = %s %s, want text/html and an .html id", f.MediaType, f.ID)
	}
	if s.Total() != int64(len(html)) {
		t.Errorf("Total = %d: the refused file was counted", s.Total())
	}
}

// counter counts what is read from an endless stream.
type counter struct{ n int64 }

func (c *counter) Read(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// An upload of 1 GiB (here: endless) is refused at the limit, having
// read no more than one byte past it.
func TestSaveTooBigReadsToTheLimit(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	s, dir := open(t, files.Config{MaxFileBytes: limit})
	c := &counter{}
	_, err := s.Save(io.LimitReader(c, 1<<30), files.Upload{Name: "big.bin"})
	if !errors.Is(err, files.ErrTooBig) {
		t.Fatalf("Save(1 GiB) = %v, want ErrTooBig", err)
	}
	if c.n > limit+1 {
		t.Errorf("Save read %d bytes, want at most %d", c.n, limit+1)
	}
	assertEmpty(t, dir)
}

func TestStoreFull(t *testing.T) {
	t.Parallel()
	s, _ := open(t, files.Config{MaxFileBytes: 1000, MaxStoreBytes: 1500})
	if _, err := s.Save(bytes.NewReader(bytes.Repeat([]byte("a"), 1000)), files.Upload{Name: "a.txt"}); err != nil {
		t.Fatalf("Save(first) = %v", err)
	}
	c := &counter{}
	_, err := s.Save(io.LimitReader(c, 1000), files.Upload{Name: "b.txt"})
	if !errors.Is(err, files.ErrStoreFull) {
		t.Fatalf("Save past the store's total = %v, want ErrStoreFull", err)
	}
	if c.n > 501 {
		t.Errorf("Save read %d bytes with 500 left, want at most 501", c.n)
	}
}

// failing gives some bytes and then fails, as a connection that drops.
type failing struct{ left int }

func (f *failing) Read(p []byte) (int, error) {
	if f.left == 0 {
		return 0, errors.New("connection reset")
	}
	n := min(f.left, len(p))
	for i := range n {
		p[i] = 'x'
	}
	f.left -= n
	return n, nil
}

// A write that fails half-way leaves nothing; one a crash interrupted (a
// temporary file, a note without its file) is removed at Open and never
// counted or served.
func TestCrashSafeWrite(t *testing.T) {
	t.Parallel()
	s, dir := open(t, files.Config{})
	if _, err := s.Save(&failing{left: 100 << 10}, files.Upload{Name: "half.txt"}); err == nil {
		t.Fatal("Save of a stream that fails = nil, want its error")
	}
	assertEmpty(t, dir)
	s.Close()

	// What a crash leaves: a temporary file, and a note whose file was
	// never renamed into place.
	id := strings.Repeat("ab", 32) + ".txt"
	if err := os.WriteFile(filepath.Join(dir, "tmp", "0123"), []byte("half a file"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, id+".meta.json"), []byte(`{"name":"x","mediaType":"text/plain","bytes":9}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s2, err := files.Open(dir, files.Config{})
	if err != nil {
		t.Fatalf("Open after a crash: %v", err)
	}
	defer s2.Close()
	assertEmpty(t, dir)
	if _, err := s2.Meta(id); !errors.Is(err, files.ErrNotFound) {
		t.Errorf("Meta(a note without its file) = %v, want ErrNotFound", err)
	}
	if s2.Total() != 0 {
		t.Errorf("Total = %d, want 0", s2.Total())
	}
}

// assertEmpty fails unless the store's folder holds no file and nothing
// half-written.
func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	var left []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, path)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("the store holds %v, want nothing", left)
	}
}

// An id that is not of the store's shape is refused before anything
// touches the file system: with the folder gone, a shaped id is not
// found, and a path is still ErrBadID.
func TestBadIDNeverReachesTheDisk(t *testing.T) {
	t.Parallel()
	s, dir := open(t, files.Config{})
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{
		"../../etc/passwd",
		"../" + strings.Repeat("a", 64) + ".png",
		strings.Repeat("a", 64) + ".png/../x",
		strings.Repeat("A", 64) + ".png",
		strings.Repeat("a", 64) + ".exe",
		strings.Repeat("a", 63) + ".png",
		strings.Repeat("a", 64) + ".meta.json",
		"",
	} {
		if _, err := s.Read(t.Context(), id); !errors.Is(err, files.ErrBadID) {
			t.Errorf("Read(%q) = %v, want ErrBadID", id, err)
		}
		if err := s.Attach(id, "t1"); !errors.Is(err, files.ErrBadID) {
			t.Errorf("Attach(%q) = %v, want ErrBadID", id, err)
		}
	}
	if _, err := s.Read(t.Context(), strings.Repeat("a", 64)+".png"); errors.Is(err, files.ErrBadID) {
		t.Errorf("Read(a shaped id) = %v, want a refusal other than ErrBadID", err)
	}
}

func TestSaveRefusals(t *testing.T) {
	t.Parallel()
	s, _ := open(t, files.Config{})
	for name, tc := range map[string]struct {
		up   files.Upload
		body []byte
		want error
	}{
		"no name":        {files.Upload{}, png, files.ErrBadName},
		"a path":         {files.Upload{Name: "../cat.png"}, png, files.ErrBadName},
		"a long name":    {files.Upload{Name: strings.Repeat("a", files.MaxNameBytes+1)}, png, files.ErrBadName},
		"a control char": {files.Upload{Name: "cat\n.png"}, png, files.ErrBadName},
		"empty":          {files.Upload{Name: "e.txt"}, nil, files.ErrEmpty},
		"a PNG for pdf":  {files.Upload{Name: "cat.png", Accept: "application/pdf"}, png, files.ErrNotAccepted},
	} {
		if _, err := s.Save(bytes.NewReader(tc.body), tc.up); !errors.Is(err, tc.want) {
			t.Errorf("%s: Save = %v, want %v", name, err, tc.want)
		}
	}
	if _, err := s.Save(bytes.NewReader(png), files.Upload{Name: "c.png", Accept: "image/ png"}); err == nil {
		t.Error("Save with a malformed accept = nil, want an error")
	}
}
