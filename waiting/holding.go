package waiting

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/symphonix/symphonix/flow"
)

// NoteState is where a holding note stands.
type NoteState string

const (
	// Asking: the run paused at an approval while a board is configured
	// but could not be asked who decides; it waits, and asks again when
	// the board is reachable. Never answered in the chat.
	Asking NoteState = "asking"
	// Held: the organisation decides, on the board. Never answered in the
	// chat.
	Held NoteState = "held"
	// Card: the board said the approval is not governed; the chat decides.
	Card NoteState = "card"
	// Tombstone: the run was cancelled; nothing may answer it again.
	Tombstone NoteState = "tombstone"
	// Withdrawn: a tombstone the board has yet to hear of. The run was
	// ended here (agent cancel) while its approval was the board's; the
	// board is told when the agent next links, and the note then becomes a
	// Tombstone. Nothing may answer it either.
	Withdrawn NoteState = "withdrawn"
)

func (s NoteState) valid() bool {
	switch s {
	case Asking, Held, Card, Tombstone, Withdrawn:
		return true
	}
	return false
}

// Ended reports whether s is the note of a run that was ended: a Tombstone,
// or Withdrawn.
func (s NoteState) Ended() bool { return s == Tombstone || s == Withdrawn }

// Note is the holding note: the run on Thread waits at Node for a decision,
// and this is what was put in front of the person who makes it. It is taken
// once, when the run pauses, and kept beside the run, so the agent can ask
// again after a restart and check a decision against it.
type Note struct {
	// Run names this wait: one per pause, so a decision made for one run is
	// never read as the answer to another on the same thread and node.
	Run    string
	Thread string
	Node   string
	Ask    string
	Show   map[string]any
	// Account is the case for saying yes.
	Account string
	// Digest is approvals.Digest of what is shown and the account.
	Digest string
	State  NoteState
	// Rule is the id of the rule that governs it, when Held.
	Rule string
	// ApprovalID is the board's id for it, once the board answered a raise.
	ApprovalID string
	// Why says, for a Tombstone, why the run ended.
	Why string
	// At is when the run paused; Updated when the note last changed.
	At, Updated time.Time
}

// Holding keeps holding notes. The zero state "" in Swap means no note.
type Holding interface {
	// Hold stores n, replacing the note for its Run and Node.
	Hold(ctx context.Context, n Note) error
	// Note returns the newest note for thread whose run was not ended (see
	// NoteState.Ended).
	Note(ctx context.Context, thread string) (Note, bool, error)
	// Find returns the note for run and node, ended or not.
	Find(ctx context.Context, run, node string) (Note, bool, error)
	// Notes lists the notes in any of states, oldest first.
	Notes(ctx context.Context, states ...NoteState) ([]Note, error)
	// Swap moves the note for run and node from one state to another ("":
	// deletes it), with why, if and only if it is in from; it reports
	// whether it did. Only one of several concurrent Swaps from the same
	// state succeeds: that is how a decision is acted on once.
	Swap(ctx context.Context, run, node string, from, to NoteState, why string) (bool, error)
	// Forget deletes every note for thread, tombstones included.
	Forget(ctx context.Context, thread string) error
}

// HoldingOf returns the holding notes kept beside cp: in the same database
// when cp is a Store, so a note is exactly as durable as the run it is
// about, and in memory otherwise.
func HoldingOf(cp flow.Checkpointer) Holding {
	if s, ok := cp.(*Store); ok {
		return storeHolding{s}
	}
	return &MemoryHolding{}
}

// storeHolding is the holding table of a Store.
type storeHolding struct{ s *Store }

func (h storeHolding) Hold(ctx context.Context, n Note) error {
	if err := checkNote(n); err != nil {
		return err
	}
	show, err := json.Marshal(n.Show)
	if err != nil {
		return fmt.Errorf("waiting: hold %s/%s: show: %w", n.Run, n.Node, err)
	}
	now := h.s.now()
	if n.At.IsZero() {
		n.At = now
	}
	_, err = h.s.db.ExecContext(ctx, `INSERT INTO holding
		(run, node, thread, ask, show, account, digest, state, rule, approval_id, why, at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (run, node) DO UPDATE SET thread = excluded.thread, ask = excluded.ask,
			show = excluded.show, account = excluded.account, digest = excluded.digest,
			state = excluded.state, rule = excluded.rule, approval_id = excluded.approval_id,
			why = excluded.why, at = excluded.at, updated_at = excluded.updated_at`,
		n.Run, n.Node, n.Thread, n.Ask, show, n.Account, n.Digest, string(n.State), n.Rule, n.ApprovalID, n.Why,
		n.At.UnixMilli(), now.UnixMilli())
	if err != nil {
		return fmt.Errorf("waiting: hold %s/%s: %w", n.Run, n.Node, err)
	}
	return nil
}

const noteColumns = `run, node, thread, ask, show, account, digest, state, rule, approval_id, why, at, updated_at`

func scanNote(row interface{ Scan(...any) error }) (Note, error) {
	var (
		n           Note
		show        []byte
		state       string
		at, updated int64
	)
	if err := row.Scan(&n.Run, &n.Node, &n.Thread, &n.Ask, &show, &n.Account, &n.Digest, &state, &n.Rule,
		&n.ApprovalID, &n.Why, &at, &updated); err != nil {
		return Note{}, err
	}
	if err := json.Unmarshal(show, &n.Show); err != nil {
		return Note{}, fmt.Errorf("the note for %s/%s: show: %w", n.Run, n.Node, err)
	}
	n.State = NoteState(state)
	n.At, n.Updated = time.UnixMilli(at).UTC(), time.UnixMilli(updated).UTC()
	return n, nil
}

func (h storeHolding) Note(ctx context.Context, thread string) (Note, bool, error) {
	row := h.s.db.QueryRowContext(ctx, `SELECT `+noteColumns+` FROM holding
		WHERE thread = ? AND state NOT IN (?, ?) ORDER BY at DESC, updated_at DESC LIMIT 1`,
		thread, string(Tombstone), string(Withdrawn))
	return oneNote(row, "thread "+thread)
}

func (h storeHolding) Find(ctx context.Context, run, node string) (Note, bool, error) {
	row := h.s.db.QueryRowContext(ctx, `SELECT `+noteColumns+` FROM holding WHERE run = ? AND node = ?`, run, node)
	return oneNote(row, run+"/"+node)
}

func oneNote(row *sql.Row, what string) (Note, bool, error) {
	n, err := scanNote(row)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Note{}, false, nil
	case err != nil:
		return Note{}, false, fmt.Errorf("waiting: the note for %s: %w", what, err)
	}
	return n, true, nil
}

func (h storeHolding) Notes(ctx context.Context, states ...NoteState) ([]Note, error) {
	if len(states) == 0 {
		return nil, nil
	}
	args := make([]any, len(states))
	for i, s := range states {
		args[i] = string(s)
	}
	q := `SELECT ` + noteColumns + ` FROM holding WHERE state IN (?` + strings.Repeat(", ?", len(states)-1) +
		`) ORDER BY at, run, node`
	rows, err := h.s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("waiting: notes: %w", err)
	}
	defer rows.Close()
	var out []Note
	for rows.Next() {
		n, err := scanNote(rows)
		if err != nil {
			return nil, fmt.Errorf("waiting: notes: %w", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("waiting: notes: %w", err)
	}
	return out, nil
}

func (h storeHolding) Swap(ctx context.Context, run, node string, from, to NoteState, why string) (bool, error) {
	var (
		res sql.Result
		err error
	)
	if to == "" {
		res, err = h.s.db.ExecContext(ctx, `DELETE FROM holding WHERE run = ? AND node = ? AND state = ?`,
			run, node, string(from))
	} else {
		if !to.valid() {
			return false, fmt.Errorf("waiting: swap %s/%s: no such state %q", run, node, to)
		}
		res, err = h.s.db.ExecContext(ctx, `UPDATE holding SET state = ?, why = ?, updated_at = ?
			WHERE run = ? AND node = ? AND state = ?`, string(to), why, h.s.now().UnixMilli(), run, node, string(from))
	}
	if err != nil {
		return false, fmt.Errorf("waiting: swap %s/%s: %w", run, node, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("waiting: swap %s/%s: %w", run, node, err)
	}
	return n == 1, nil
}

func (h storeHolding) Forget(ctx context.Context, thread string) error {
	if _, err := h.s.db.ExecContext(ctx, `DELETE FROM holding WHERE thread = ?`, thread); err != nil {
		return fmt.Errorf("waiting: forget the notes of %q: %w", thread, err)
	}
	return nil
}

func checkNote(n Note) error {
	switch {
	case n.Run == "":
		return errors.New("waiting: hold: the note has no run")
	case n.Node == "":
		return errors.New("waiting: hold: the note has no node")
	case !n.State.valid():
		return fmt.Errorf("waiting: hold %s/%s: no such state %q", n.Run, n.Node, n.State)
	}
	return nil
}

// MemoryHolding keeps notes in memory, for an agent whose runs wait in
// memory: a note lasts exactly as long as its run. Safe for concurrent use.
type MemoryHolding struct {
	mu    sync.Mutex
	notes map[[2]string]Note
}

var _ Holding = (*MemoryHolding)(nil)

func (m *MemoryHolding) Hold(_ context.Context, n Note) error {
	if err := checkNote(n); err != nil {
		return err
	}
	show, err := json.Marshal(n.Show)
	if err != nil {
		return fmt.Errorf("waiting: hold %s/%s: show: %w", n.Run, n.Node, err)
	}
	n.Show = nil
	if err := json.Unmarshal(show, &n.Show); err != nil {
		return fmt.Errorf("waiting: hold %s/%s: show: %w", n.Run, n.Node, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.notes == nil {
		m.notes = map[[2]string]Note{}
	}
	now := time.Now().UTC()
	if n.At.IsZero() {
		n.At = now
	}
	n.Updated = now
	m.notes[[2]string{n.Run, n.Node}] = n
	return nil
}

func (m *MemoryHolding) Note(_ context.Context, thread string) (Note, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var (
		best  Note
		found bool
	)
	for _, n := range m.notes {
		if n.Thread == thread && !n.State.Ended() && (!found || n.At.After(best.At)) {
			best, found = n, true
		}
	}
	best.Show = cloneShow(best.Show)
	return best, found, nil
}

func (m *MemoryHolding) Find(_ context.Context, run, node string) (Note, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.notes[[2]string{run, node}]
	n.Show = cloneShow(n.Show)
	return n, ok, nil
}

func (m *MemoryHolding) Notes(_ context.Context, states ...NoteState) ([]Note, error) {
	m.mu.Lock()
	var out []Note
	for _, n := range m.notes {
		if slices.Contains(states, n.State) {
			n.Show = cloneShow(n.Show)
			out = append(out, n)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b Note) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		if c := strings.Compare(a.Run, b.Run); c != 0 {
			return c
		}
		return strings.Compare(a.Node, b.Node)
	})
	return out, nil
}

func (m *MemoryHolding) Swap(_ context.Context, run, node string, from, to NoteState, why string) (bool, error) {
	if to != "" && !to.valid() {
		return false, fmt.Errorf("waiting: swap %s/%s: no such state %q", run, node, to)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{run, node}
	n, ok := m.notes[k]
	if !ok || n.State != from {
		return false, nil
	}
	if to == "" {
		delete(m.notes, k)
		return true, nil
	}
	n.State, n.Why, n.Updated = to, why, time.Now().UTC()
	m.notes[k] = n
	return true, nil
}

func (m *MemoryHolding) Forget(_ context.Context, thread string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, n := range m.notes {
		if n.Thread == thread {
			delete(m.notes, k)
		}
	}
	return nil
}

// cloneShow copies what is shown through JSON, so a note handed out cannot
// change the one kept.
func cloneShow(show map[string]any) map[string]any {
	if show == nil {
		return nil
	}
	b, err := json.Marshal(show)
	if err != nil {
		return nil
	}
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}
