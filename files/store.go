package files

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// The store's default bounds (Config).
const (
	// DefaultMaxFileBytes is the largest file the store takes: 20 MiB.
	DefaultMaxFileBytes = 20 << 20
	// DefaultMaxStoreBytes is the most all its files may hold together:
	// 1 GiB.
	DefaultMaxStoreBytes = 1 << 30
	// MaxThreads is how many threads one file may belong to.
	MaxThreads = 1024
	// MaxThreadBytes is the longest thread name a file is attached to.
	MaxThreadBytes = 256
	// maxMetaBytes is the most a file's note may be: MaxThreads names and
	// the rest.
	maxMetaBytes = MaxThreads*(MaxThreadBytes+3) + 4096
)

// Config configures Open.
type Config struct {
	// MaxFileBytes: the largest file Save takes. 0: DefaultMaxFileBytes.
	MaxFileBytes int64
	// MaxStoreBytes: the most the store's files may hold together.
	// 0: DefaultMaxStoreBytes.
	MaxStoreBytes int64
}

// Meta is the note kept beside a file.
type Meta struct {
	// Name is the name the file was first given.
	Name      string `json:"name"`
	MediaType string `json:"mediaType"`
	Bytes     int64  `json:"bytes"`
	// Threads are the threads the file belongs to, in the order it joined
	// them: who may read it is decided by them.
	Threads []string `json:"threads,omitempty"`
}

// Store is the files of one agent folder. It is safe for concurrent use.
type Store struct {
	root     *os.Root
	maxFile  int64
	maxStore int64

	mu    sync.Mutex // held while the folder's set of files changes
	total int64      // the bytes of every file in the store
}

// tmpDir is the folder under the store's where files are written before
// they are renamed into place; what is in it at Open is a write a crash
// interrupted, and removed.
const tmpDir = "tmp"

// Dir is where an agent folder keeps its files: DIR/.symphonix/files.
func Dir(agentDir string) string { return filepath.Join(agentDir, ".symphonix", "files") }

// Open opens (creating it) the store in dir. It removes what a crash left
// half-written and adds up what the store holds.
func Open(dir string, cfg Config) (*Store, error) {
	if cfg.MaxFileBytes <= 0 {
		cfg.MaxFileBytes = DefaultMaxFileBytes
	}
	if cfg.MaxStoreBytes <= 0 {
		cfg.MaxStoreBytes = DefaultMaxStoreBytes
	}
	if err := os.MkdirAll(filepath.Join(dir, tmpDir), 0o700); err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	s := &Store{root: root, maxFile: cfg.MaxFileBytes, maxStore: cfg.MaxStoreBytes}
	if err := s.tidy(); err != nil {
		root.Close()
		return nil, err
	}
	return s, nil
}

// tidy removes half-written files and notes without a file, and adds up
// the files.
func (s *Store) tidy() error {
	left, err := fs.ReadDir(s.root.FS(), tmpDir)
	if err != nil {
		return fmt.Errorf("files: %w", err)
	}
	for _, e := range left {
		if err := s.root.Remove(tmpDir + "/" + e.Name()); err != nil {
			return fmt.Errorf("files: removing a half-written file: %w", err)
		}
	}
	all, err := fs.ReadDir(s.root.FS(), ".")
	if err != nil {
		return fmt.Errorf("files: %w", err)
	}
	for _, e := range all {
		name := e.Name()
		if id, ok := strings.CutSuffix(name, metaSuffix); ok {
			if _, err := s.root.Stat(id); errors.Is(err, fs.ErrNotExist) {
				// The note is written first: a crash before the file was
				// renamed into place leaves a note of nothing.
				if err := s.root.Remove(name); err != nil {
					return fmt.Errorf("files: %w", err)
				}
			}
			continue
		}
		if ValidID(name) != nil {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return fmt.Errorf("files: %w", err)
		}
		s.total += info.Size()
	}
	return nil
}

// Close releases the store's folder.
func (s *Store) Close() error { return s.root.Close() }

// metaSuffix ends the name of a file's note: "<id>.meta.json", which is
// never an id.
const metaSuffix = ".meta.json"

// Upload says what Save is given besides the bytes.
type Upload struct {
	// Name: required; the name the file is given, checked by ValidName.
	Name string
	// Declared: the type the sender said the file is. It decides nothing;
	// a refusal quotes it.
	Declared string
	// Accept: the media types the file must be of (Accepts). "": any.
	Accept string
	// Thread: the thread the file belongs to. "": none yet (Attach).
	Thread string
}

// Save reads r to its end, at most the per-file limit (and no more than
// the store has room for), and keeps it: its type sniffed from its bytes,
// refused when Accept does not take that type; written to a temporary file
// and renamed into place. A file the store already has is not written
// again: the thread is added to its note. It answers the file's object,
// with up.Name as its name.
func (s *Store) Save(r io.Reader, up Upload) (File, error) {
	if err := ValidName(up.Name); err != nil {
		return File{}, err
	}
	if err := validThread(up.Thread, true); err != nil {
		return File{}, err
	}
	if err := CheckAccept(up.Accept); err != nil {
		return File{}, err
	}
	limit, full := s.maxFile, false
	s.mu.Lock()
	if room := s.maxStore - s.total; room < limit {
		limit, full = max(room, 0), true
	}
	s.mu.Unlock()

	tmp := tmpDir + "/" + randomName()
	f, err := s.root.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return File{}, fmt.Errorf("files: %w", err)
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			s.root.Remove(tmp)
		}
	}()
	h := sha256.New()
	head := &headWriter{}
	n, err := io.Copy(io.MultiWriter(f, h, head), io.LimitReader(r, limit+1))
	switch {
	case err != nil:
		return File{}, fmt.Errorf("files: reading the file: %w", err)
	case n > limit && full:
		return File{}, fmt.Errorf("%w: it holds at most %d bytes", ErrStoreFull, s.maxStore)
	case n > limit:
		return File{}, fmt.Errorf("%w: more than %d bytes", ErrTooBig, limit)
	case n == 0:
		return File{}, ErrEmpty
	}
	mt := Sniff(head.b)
	if !Accepts(up.Accept, mt) {
		said := ""
		if up.Declared != "" {
			said = fmt.Sprintf(" (sent as %s)", clip(up.Declared))
		}
		return File{}, fmt.Errorf("%w: the file is %s%s; want %s", ErrNotAccepted, Essence(mt), said, up.Accept)
	}
	if err := f.Sync(); err != nil {
		return File{}, fmt.Errorf("files: %w", err)
	}
	if err := f.Close(); err != nil {
		return File{}, fmt.Errorf("files: %w", err)
	}
	id := hex.EncodeToString(h.Sum(nil)) + "." + extension(mt)

	s.mu.Lock()
	defer s.mu.Unlock()
	if m, err := s.meta(id); err == nil {
		// Already here: the bytes are the same by their digest.
		done = true
		s.root.Remove(tmp)
		if err := s.attach(id, m, up.Thread); err != nil {
			return File{}, err
		}
		return File{ID: id, Name: up.Name, MediaType: m.MediaType, URL: URLOf(id), Bytes: m.Bytes}, nil
	}
	if s.total+n > s.maxStore {
		return File{}, fmt.Errorf("%w: it holds at most %d bytes", ErrStoreFull, s.maxStore)
	}
	m := Meta{Name: up.Name, MediaType: mt, Bytes: n}
	if up.Thread != "" {
		m.Threads = []string{up.Thread}
	}
	// The note first, then the file: the file in place is the commit, and
	// a note without one is removed at Open.
	if err := s.writeMeta(id, m); err != nil {
		return File{}, err
	}
	if err := s.root.Rename(tmp, id); err != nil {
		return File{}, fmt.Errorf("files: %w", err)
	}
	done = true
	s.syncDir()
	s.total += n
	return File{ID: id, Name: up.Name, MediaType: mt, URL: URLOf(id), Bytes: n}, nil
}

// headWriter keeps the first SniffBytes written to it.
type headWriter struct{ b []byte }

func (w *headWriter) Write(p []byte) (int, error) {
	if room := SniffBytes - len(w.b); room > 0 {
		w.b = append(w.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func randomName() string {
	b := make([]byte, 16)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// syncDir makes the store's renames durable; a failure is not one of the
// write's (the file is in place), only of how soon it is on the disk.
func (s *Store) syncDir() {
	if d, err := s.root.Open("."); err == nil {
		d.Sync()
		d.Close()
	}
}

// Meta is the note of the file id.
func (s *Store) Meta(id string) (Meta, error) {
	if err := ValidID(id); err != nil {
		return Meta{}, err
	}
	return s.meta(id)
}

func (s *Store) meta(id string) (Meta, error) {
	f, err := s.root.Open(id + metaSuffix)
	if errors.Is(err, fs.ErrNotExist) {
		return Meta{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return Meta{}, fmt.Errorf("files: %w", err)
	}
	defer f.Close()
	var m Meta
	if err := json.NewDecoder(io.LimitReader(f, maxMetaBytes)).Decode(&m); err != nil {
		return Meta{}, fmt.Errorf("files: the note of %s: %w", id, err)
	}
	if _, err := s.root.Stat(id); err != nil {
		return Meta{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return m, nil
}

// writeMeta writes the note of id: to a temporary file, renamed into place.
func (s *Store) writeMeta(id string, m Meta) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("files: %w", err)
	}
	tmp := tmpDir + "/" + randomName()
	if err := s.root.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("files: %w", err)
	}
	if err := s.root.Rename(tmp, id+metaSuffix); err != nil {
		s.root.Remove(tmp)
		return fmt.Errorf("files: %w", err)
	}
	return nil
}

// Attach adds thread to the threads the file id belongs to.
func (s *Store) Attach(id, thread string) error {
	if err := ValidID(id); err != nil {
		return err
	}
	if err := validThread(thread, false); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.meta(id)
	if err != nil {
		return err
	}
	return s.attach(id, m, thread)
}

func (s *Store) attach(id string, m Meta, thread string) error {
	if thread == "" || slices.Contains(m.Threads, thread) {
		return nil
	}
	if len(m.Threads) >= MaxThreads {
		return fmt.Errorf("%w: %s is in %d threads already", ErrTooManyThreads, id, MaxThreads)
	}
	m.Threads = append(m.Threads, thread)
	return s.writeMeta(id, m)
}

func validThread(thread string, empty bool) error {
	switch {
	case thread == "" && !empty:
		return errors.New("files: thread: empty")
	case len(thread) > MaxThreadBytes:
		return fmt.Errorf("files: thread: %d bytes, at most %d", len(thread), MaxThreadBytes)
	}
	return nil
}

// Object is the file id's object, as a file channel holds it, with name
// as its name ("": the name it was first given).
func (s *Store) Object(id, name string) (File, error) {
	m, err := s.Meta(id)
	if err != nil {
		return File{}, err
	}
	if name == "" {
		name = m.Name
	}
	return File{ID: id, Name: name, MediaType: m.MediaType, URL: URLOf(id), Bytes: m.Bytes}, nil
}

// Open opens the file id for reading, with its note.
func (s *Store) Open(id string) (*os.File, Meta, error) {
	m, err := s.Meta(id)
	if err != nil {
		return nil, Meta{}, err
	}
	f, err := s.root.Open(id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Meta{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, Meta{}, fmt.Errorf("files: %w", err)
	}
	return f, m, nil
}

// Read is the bytes of the file id: at most the per-file limit, which no
// file the store took is over.
func (s *Store) Read(ctx context.Context, id string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, _, err := s.Open(id)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, s.maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	if int64(len(b)) > s.maxFile {
		return nil, fmt.Errorf("%w: %s is more than %d bytes", ErrTooBig, id, s.maxFile)
	}
	return b, nil
}

// Total is how many bytes the store's files hold together.
func (s *Store) Total() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// MaxFileBytes is the largest file Save takes.
func (s *Store) MaxFileBytes() int64 { return s.maxFile }
