package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/symphonix/symphonix/agent"
	"github.com/symphonix/symphonix/files"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/governed"
	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/pause"
	"github.com/symphonix/symphonix/transcript"
)

// Config configures New.
type Config struct {
	// Agent: required. The server runs its Graph and reads its Flow; it
	// does not close it.
	Agent *agent.Agent
	// Conversations: the file the threads the server has run are
	// remembered in, so the list outlives a restart. "":
	// ConversationsPath(Agent.Dir).
	Conversations string
	// Public: the server is reachable beyond loopback (--public), so a
	// request's Host need not name a loopback address. false refuses any
	// other Host, which is what keeps a web page that rebinds its own name
	// to 127.0.0.1 out.
	Public bool
	// Approvals: who answers the approvals runs wait at (the chat, or the
	// organisation on a board), and the decisions the board sends. nil:
	// no board is configured, and the chat answers every approval.
	Approvals *governed.Approvals
	// Monitored: a board is configured, so the door is on: a browser is
	// known by its visitor cookie and sees only its own threads and its
	// person's (docs/serve.md, "The door"); pairing and verify ask the
	// board Use gives. false: no door; every caller is the operator.
	Monitored bool
	// Ready: closed when runs may start. A run asked for before then (a
	// message, or an answer) waits for it, or for its request to end. The
	// agent closes it once its board has said which tools are on, or the
	// wait for that word is over, so that a tool is not refused for nobody
	// having decided when the board had. nil: runs start at once.
	Ready <-chan struct{}
	// Paused: whether the agent takes new work now, asked on every
	// message that would start a run; one refused while paused is 503
	// with Retry-After and the pause (docs/serve.md, "Pause"). Answers,
	// and the runs a decision on the board resumes, go on. nil: never
	// paused.
	Paused func() pause.State
	// Journal: the agent's journal, read back at GET /api/calls. nil: the
	// agent keeps none, and the list is empty.
	Journal *journal.Journal
	// Transcript: where what was said is kept, a turn per finished run,
	// read back at GET /api/conversation and listed at GET
	// /api/conversations, and handed to a conversation's first run on a
	// thread this server has not talked on as its history. nil: nothing is
	// kept.
	Transcript *transcript.Transcript
	// About: what the board's chat window is told the flow needs, beyond
	// what the flow says (BoardDescribe).
	About AboutConfig
	// Logger: nil discards logs.
	Logger *slog.Logger
	// Now: the clock for the conversations' times; nil is time.Now.
	Now func() time.Time
}

// AboutConfig is what a served agent knows of itself beyond its flow, for
// BoardDescribe. Nothing in it may be a secret.
type AboutConfig struct {
	// Build: "sha256:…", the flow's build (agentlink.Identity.Build).
	Build string
	// Env: the names of the environment variables the agent is known to
	// read — never their values.
	Env []string
	// Model: the model in use, by name (never its key or its URL).
	Model string
}

// Server serves one agent: the chat page at / and the JSON API under /api/
// (see docs/serve.md). It is an http.Handler; runs it starts are not tied
// to the request that started them, so a person closing the tab does not
// stop a refund half-way, and an http.Server's Shutdown waits for them.
type Server struct {
	agent *agent.Agent
	gov   *governed.Approvals
	log   *slog.Logger
	now   func() time.Time
	convs *conversations
	// decided: what the board's decisions came to, per thread.
	decided outcomes
	mux     *http.ServeMux
	h       http.Handler
	// monitored, public: Config's.
	monitored bool
	public    bool
	boardMu   sync.Mutex
	board     Board // nil until Use
	reports   *reports
	ready     <-chan struct{}    // Config's; nil: ready
	pause     func() pause.State // Config.Paused; nil: never paused
	journal   *journal.Journal   // Config's; nil: none
	// transcript: Config's; nil: none.
	transcript *transcript.Transcript
	// talking: the threads this server has run a conversation on.
	talking talking
	// about: Config's.
	about AboutConfig
	// files: the agent's file store; nil for a flow without file
	// channels. uploads: each caller's uploads this minute.
	files   *files.Store
	uploads uploads
}

// New checks cfg and builds the server. It reads the conversations index
// (ctx is for that).
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Agent == nil || cfg.Agent.Graph == nil || cfg.Agent.Flow == nil {
		return nil, errors.New("serve: Config.Agent is required (an opened agent)")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Conversations == "" {
		cfg.Conversations = ConversationsPath(cfg.Agent.Dir)
	}
	if cfg.Approvals == nil {
		gov, err := governed.New(governed.Config{Graph: cfg.Agent.Graph, Holding: cfg.Agent.Holding()})
		if err != nil {
			return nil, err
		}
		cfg.Approvals = gov
	}
	s := &Server{
		agent: cfg.Agent,
		gov:   cfg.Approvals,
		log:   cfg.Logger,
		now:   cfg.Now,
		convs: openConversations(ctx, cfg.Conversations, cfg.Now(), cfg.Logger),
		mux:   http.NewServeMux(),

		monitored: cfg.Monitored,
		public:    cfg.Public,
		reports:   newReports(),
		ready:     cfg.Ready,
		pause:     cfg.Paused,
		journal:   cfg.Journal,

		transcript: cfg.Transcript,
		about:      cfg.About,
		files:      cfg.Agent.Files,
	}
	s.mux.Handle("/", page())
	s.mux.Handle("/api/", s.api(nil, func(http.ResponseWriter, *http.Request) error {
		return &requestError{status: http.StatusNotFound, field: "path", msg: "no such API"}
	}))
	s.mux.Handle("/api/agent", s.api([]string{http.MethodGet}, s.getAgent))
	s.mux.Handle("/api/conversations", s.api([]string{http.MethodGet}, s.getConversations))
	s.mux.Handle("/api/conversation", s.api([]string{http.MethodGet}, s.getConversation))
	s.mux.Handle("/api/threads/{thread}", s.api([]string{http.MethodGet}, s.getThread))
	s.mux.Handle("/api/threads/{thread}/messages", s.api([]string{http.MethodPost}, s.postMessage))
	s.mux.Handle("/api/threads/{thread}/answer", s.api([]string{http.MethodPost}, s.postAnswer))
	s.mux.Handle("/api/threads/{thread}/pair", s.api([]string{http.MethodPost}, s.postPair))
	s.mux.Handle("/api/threads/{thread}/verify", s.api([]string{http.MethodPost}, s.postVerify))
	s.mux.Handle("/api/door", s.api([]string{http.MethodGet}, s.getDoor))
	s.mux.Handle("/api/calls", s.api([]string{http.MethodGet}, s.getCalls))
	s.mux.Handle("/files", s.api([]string{http.MethodPost}, s.postFile))
	s.mux.Handle("/files/{id}", s.api([]string{http.MethodGet}, s.getFile))

	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, &requestError{status: http.StatusForbidden, field: "Origin",
			msg: "a request from another site: the served agent takes requests from its own page only"})
	}))
	var h http.Handler = cop.Handler(s.mux)
	if !cfg.Public {
		h = s.loopbackOnly(h)
	}
	s.h = h
	return s, nil
}

// ServeHTTP serves the page and the API, with a strict
// Content-Security-Policy on every response.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; media-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	s.h.ServeHTTP(w, r)
}

// loopbackOnly refuses a request whose Host is not a loopback address or
// localhost: a page on another site that points its own name at 127.0.0.1
// (DNS rebinding) sends its own name as Host.
func (s *Server) loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !LoopbackHost(r.Host) {
			s.fail(w, r, &requestError{status: http.StatusForbidden, field: "Host",
				msg: fmt.Sprintf("%q is not a loopback address: this agent is served on loopback only", r.Host)})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// LoopbackHost reports whether hostport (a Host header, or a --listen
// address) names this machine's loopback: localhost, or a loopback IP.
// An empty host (":8080", every interface) is not loopback.
func LoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ErrNotLoopback: a listen address beyond loopback without --public.
var ErrNotLoopback = errors.New("serve: not a loopback address, and there is no authentication on a served agent yet")

// CheckListen refuses a listen address that is not loopback unless public
// is set.
func CheckListen(addr string, public bool) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("serve: listen address %q: %w", addr, err)
	}
	if !public && !LoopbackHost(addr) {
		return fmt.Errorf("%q: %w: bind 127.0.0.1, or say --public", addr, ErrNotLoopback)
	}
	return nil
}

// api is one API endpoint: the methods it takes (nil: any, for the
// catch-all), and the function that answers it, whose error fail maps.
func (s *Server) api(methods []string, fn func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if methods != nil && !slices.Contains(methods, r.Method) &&
			!(r.Method == http.MethodHead && slices.Contains(methods, http.MethodGet)) {
			w.Header().Set("Allow", strings.Join(methods, ", "))
			s.fail(w, r, &requestError{status: http.StatusMethodNotAllowed, field: "method",
				msg: fmt.Sprintf("%s: want %s", r.Method, strings.Join(methods, " or "))})
			return
		}
		r = r.WithContext(withCaller(r.Context(), s.identify(w, r)))
		if err := fn(w, r); err != nil {
			s.fail(w, r, err)
		}
	})
}

// errorBody is what every refusal sends.
type errorBody struct {
	Error string `json:"error"`
	// Field is the field or header the request was wrong about, when the
	// refusal is about one.
	Field string `json:"field,omitempty"`
	// Paused: why the agent takes no new work, on a 503 refusing it.
	Paused *Paused `json:"paused,omitempty"`
}

// fail is the one place errors become statuses: a request's mistake is
// sent as it is, with its field; a thread that waits, or has nothing
// waiting, is a conflict; a failed node is named; anything else is logged
// and sent as a bare internal error.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var (
		re *requestError
		ne *flow.NodeError
		pe *pausedError
		fe *flow.FileError
	)
	thread := r.PathValue("thread")
	switch {
	case errors.As(err, &pe):
		failPaused(w, pe)
	case errors.As(err, &fe):
		writeJSON(w, http.StatusBadRequest, errorBody{Error: fe.Problem, Field: fe.Channel})
	case errors.As(err, &re):
		writeJSON(w, re.status, errorBody{Error: re.Error(), Field: re.field})
	case errors.Is(err, flow.ErrWaiting):
		writeJSON(w, http.StatusConflict, errorBody{
			Error: fmt.Sprintf("thread %s waits for an answer: POST /api/threads/%s/answer", thread, thread)})
	case errors.Is(err, governed.ErrGoverned):
		writeJSON(w, http.StatusConflict, errorBody{Error: err.Error(), Field: "answer"})
	case errors.Is(err, flow.ErrNothingPending):
		writeJSON(w, http.StatusConflict, errorBody{Error: fmt.Sprintf("thread %s has nothing waiting for an answer", thread)})
	case errors.Is(err, flow.ErrEmptyAnswer):
		writeJSON(w, http.StatusBadRequest, errorBody{
			Error: `answer: empty; a refusal needs a word: "no" or {"approved": false}`, Field: "answer"})
	case errors.As(err, &ne):
		s.log.ErrorContext(r.Context(), "run failed", "thread", thread, "node", ne.Node, "err", err)
		writeJSON(w, http.StatusInternalServerError, errorBody{
			Error: fmt.Sprintf("the run failed at node %s; the agent's log says why", ne.Node)})
	default:
		s.log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: "internal error"})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// RunContext is the context a run on thread is carried on when nothing
// asked for it (a decision made on the board resumed it): the thread is
// in it, for the journal. Give it to governed.Config.RunContext.
func RunContext(thread string) context.Context {
	return journal.WithThread(context.Background(), thread)
}
