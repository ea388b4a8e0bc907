package serve

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/symphonix/symphonix/files"
	"github.com/symphonix/symphonix/flow"
)

// The served agent's bounds on uploads (docs/limits.md).
const (
	// UploadsPerMinute is how many files one visitor (or the operator)
	// may upload in a minute.
	UploadsPerMinute = 30
	// uploadWindows is how many visitors' upload counts are kept; past it
	// the windows that are over are forgotten, and if none is, the
	// newcomer waits for the next minute.
	uploadWindows = 4096
)

// uploads counts each caller's uploads in the current minute.
type uploads struct {
	mu sync.Mutex
	w  map[string]*uploadWindow
}

type uploadWindow struct {
	start time.Time
	n     int
}

// allow counts an upload by who at now, and reports whether it is within
// UploadsPerMinute.
func (u *uploads) allow(who string, now time.Time) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.w == nil {
		u.w = map[string]*uploadWindow{}
	}
	w := u.w[who]
	if w == nil || now.Sub(w.start) >= time.Minute {
		if w == nil && len(u.w) >= uploadWindows {
			for k, o := range u.w {
				if now.Sub(o.start) >= time.Minute {
					delete(u.w, k)
				}
			}
			if len(u.w) >= uploadWindows {
				return false
			}
		}
		w = &uploadWindow{start: now}
		u.w[who] = w
	}
	if w.n >= UploadsPerMinute {
		return false
	}
	w.n++
	return true
}

// errNoFile is a file the caller may not read: another's, or none at all.
// The two answer alike.
var errNoFile = &requestError{status: http.StatusNotFound, field: "id", msg: "no such file"}

// errNoFiles answers the file endpoints of a flow without file channels.
var errNoFiles = &requestError{status: http.StatusNotFound, field: "path", msg: "this flow has no file channels"}

// postFile is POST /files?thread=T&name=N[&channel=C]: the body is the
// file's bytes, as they are. The file is kept for thread (which the caller
// may post to, as with a message), its type sniffed from its bytes and,
// when channel is named, refused unless that file channel's accept takes
// it. It answers 201 with the file's object, which a message or an answer
// then carries.
func (s *Server) postFile(w http.ResponseWriter, r *http.Request) error {
	if s.files == nil {
		return errNoFiles
	}
	q := r.URL.Query()
	thread := q.Get("thread")
	if err := validThread(thread); err != nil {
		return err
	}
	name := q.Get("name")
	if err := files.ValidName(name); err != nil {
		return badRequest("name", "%v", trimFilesPrefix(err))
	}
	accept := ""
	if ch := q.Get("channel"); ch != "" {
		c := s.agent.Flow.State[ch]
		if c == nil || c.Type != flow.ChannelFile {
			return badRequest("channel", "%q is not a file channel of the flow", clipBytes(ch, 64))
		}
		accept = c.Accept
	}
	max := s.files.MaxFileBytes()
	if r.ContentLength > max {
		return &requestError{status: http.StatusRequestEntityTooLarge, field: "body",
			msg: fmt.Sprintf("%d bytes: a file is at most %d", r.ContentLength, max)}
	}
	c, _ := callerFrom(r.Context())
	who := c.visitor
	if who == "" {
		who = "operator"
	}
	if !s.uploads.allow(who, s.now()) {
		w.Header().Set("Retry-After", "60")
		return &requestError{status: http.StatusTooManyRequests, field: "body",
			msg: fmt.Sprintf("more than %d files in a minute", UploadsPerMinute)}
	}
	if err := s.claim(r.Context(), thread); err != nil {
		return err
	}
	body := http.MaxBytesReader(w, r.Body, max+1)
	f, err := s.files.Save(body, files.Upload{Name: name, Declared: r.Header.Get("Content-Type"), Accept: accept, Thread: thread})
	if err != nil {
		return fileRefusal(err)
	}
	s.convs.touch(r.Context(), thread, s.now())
	writeJSON(w, http.StatusCreated, f)
	return nil
}

// fileRefusal is a store's refusal as a request's: a file too big, a full
// store, a type the channel does not take, a bad name or an empty body.
func fileRefusal(err error) error {
	var tooBig *http.MaxBytesError
	switch {
	case errors.Is(err, files.ErrTooBig), errors.As(err, &tooBig):
		return &requestError{status: http.StatusRequestEntityTooLarge, field: "body", msg: trimFilesPrefix(err)}
	case errors.Is(err, files.ErrStoreFull):
		return &requestError{status: http.StatusInsufficientStorage, field: "body", msg: trimFilesPrefix(err)}
	case errors.Is(err, files.ErrNotAccepted):
		return &requestError{status: http.StatusUnsupportedMediaType, field: "body", msg: trimFilesPrefix(err)}
	case errors.Is(err, files.ErrBadName):
		return badRequest("name", "%s", trimFilesPrefix(err))
	case errors.Is(err, files.ErrEmpty):
		return badRequest("body", "empty: send the file's bytes")
	case errors.Is(err, files.ErrTooManyThreads):
		return &requestError{status: http.StatusConflict, field: "id", msg: trimFilesPrefix(err)}
	}
	return err
}

func trimFilesPrefix(err error) string {
	s := err.Error()
	if len(s) > len("files: ") && s[:len("files: ")] == "files: " {
		return s[len("files: "):]
	}
	return s
}

// getFile is GET /files/{id}: the file, to a caller in one of the threads
// it belongs to (the operator reads any); to anyone else 404, as for a
// file that is not there. It is sent as its sniffed type with nosniff, as
// an attachment unless it is an image, audio or video safe to show in the
// page, and under a policy that lets nothing in it run.
func (s *Server) getFile(w http.ResponseWriter, r *http.Request) error {
	if s.files == nil {
		return errNoFiles
	}
	id := r.PathValue("id")
	if err := files.ValidID(id); err != nil {
		return badRequest("id", "not a file id: want 64 hex digits, a dot and an extension")
	}
	m, err := s.files.Meta(id)
	if errors.Is(err, files.ErrNotFound) {
		return errNoFile
	}
	if err != nil {
		return err
	}
	if !s.mayRead(r.Context(), m) {
		return errNoFile
	}
	f, _, err := s.files.Open(id)
	if errors.Is(err, files.ErrNotFound) {
		return errNoFile
	}
	if err != nil {
		return err
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", m.MediaType)
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	disposition := "attachment"
	if files.Inline(m.MediaType) {
		disposition = "inline"
	}
	cd := mime.FormatMediaType(disposition, map[string]string{"filename": m.Name})
	if cd == "" {
		cd = disposition // a name that cannot be said in the header
	}
	h.Set("Content-Disposition", cd)
	http.ServeContent(w, r, "", time.Time{}, f)
	return nil
}

// mayRead reports whether the caller on ctx may read a file: the operator
// may; a visitor when one of its threads is theirs.
func (s *Server) mayRead(ctx context.Context, m files.Meta) bool {
	for _, t := range m.Threads {
		if s.mayUse(ctx, t) == nil {
			return true
		}
	}
	c, ok := callerFrom(ctx)
	return ok && c.operator
}

// ownFiles checks each file a message or an answer carries for thread:
// a file object (flow.FileOf) naming a file in the store that the caller
// may read, of a type the channel accepts. The file joins the thread, and
// the value becomes the store's object (its type and size are the
// store's; only the name is the sender's). in maps channels to values.
func (s *Server) ownFiles(ctx context.Context, thread string, in map[string]any, field func(ch string) string) error {
	for ch, v := range in {
		c := s.agent.Flow.State[ch]
		if c == nil || c.Type != flow.ChannelFile || v == nil {
			continue
		}
		fo, err := flow.FileOf(v)
		if err != nil {
			return badRequest(field(ch), "want a file object {id, name, mediaType, url, bytes} from POST /files: %v", err)
		}
		if s.files == nil {
			return errNoFiles
		}
		if files.ValidID(fo.ID) != nil {
			return badRequest(field(ch), "id: not a file id: upload the file with POST /files")
		}
		m, err := s.files.Meta(fo.ID)
		if errors.Is(err, files.ErrNotFound) || err == nil && !s.mayRead(ctx, m) {
			return &requestError{status: http.StatusNotFound, field: field(ch), msg: "no such file: upload it with POST /files"}
		}
		if err != nil {
			return err
		}
		if !files.Accepts(c.Accept, m.MediaType) {
			return &requestError{status: http.StatusUnsupportedMediaType, field: field(ch),
				msg: fmt.Sprintf("the file is %s; the channel takes %s", files.Essence(m.MediaType), c.Accept)}
		}
		if err := s.files.Attach(fo.ID, thread); err != nil {
			return fileRefusal(err)
		}
		name := fo.Name
		if files.ValidName(name) != nil {
			name = ""
		}
		obj, err := s.files.Object(fo.ID, name)
		if err != nil {
			return err
		}
		in[ch] = flow.File(obj).Value()
	}
	return nil
}

// ownAnswer is ownFiles for an answer to an ask that expects a file.
func (s *Server) ownAnswer(ctx context.Context, thread string, answer any) (any, error) {
	p, err := s.agent.Graph.Pending(ctx, thread)
	if err != nil || p == nil || p.Kind != flow.PendingAsk || p.Expects != flow.ChannelFile {
		return answer, err
	}
	var output string
	for _, n := range s.agent.Flow.Nodes {
		if n != nil && n.ID == p.Node {
			output = n.Output
		}
	}
	if output == "" || answer == nil {
		return answer, nil
	}
	in := map[string]any{output: answer}
	if err := s.ownFiles(ctx, thread, in, func(string) string { return "answer" }); err != nil {
		return nil, err
	}
	return in[output], nil
}
