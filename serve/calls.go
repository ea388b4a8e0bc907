package serve

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/symphonix/symphonix/journal"
)

// Calls is what GET /api/calls answers: the journal's entries, newest
// first.
type Calls struct {
	Calls []journal.Entry `json:"calls"`
}

// getCalls is GET /api/calls?limit=&kind= (the flow language reference's
// GET /calls): the journal read back, newest first, behind the door — a
// visitor sees the entries of their own threads only.
func (s *Server) getCalls(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit := journal.DefaultReadLimit
	if v := q.Get("limit"); v != "" || q.Has("limit") {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > journal.MaxReadLimit {
			return badRequest("limit", "%q: want a whole number from 1 to %d (nothing is %d)", v, journal.MaxReadLimit, journal.DefaultReadLimit)
		}
		limit = n
	}
	kind := q.Get("kind")
	if _, err := journal.CheckQuery(limit, kind); err != nil {
		var qe *journal.QueryError
		if errors.As(err, &qe) {
			return badRequest(qe.Param, "%s", qe.Problem)
		}
		return err
	}
	out := Calls{Calls: []journal.Entry{}}
	if s.journal == nil {
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	c, ok := callerFrom(r.Context())
	if !ok {
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	var keep func(journal.Entry) bool
	if !c.operator {
		keep = func(e journal.Entry) bool { return e.Thread != "" && s.convs.may(e.Thread, c.visitor) }
	}
	entries, err := journal.ReadWhere(s.journal.Path(), limit, kind, keep)
	if err != nil {
		return err
	}
	out.Calls = entries
	writeJSON(w, http.StatusOK, out)
	return nil
}
