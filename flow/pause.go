package flow

import (
	"fmt"
	"strings"
	"time"

	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/text"
)

// The kinds of thing a paused run waits for.
const (
	PendingAsk      = "ask"
	PendingApproval = "approval"
)

// Pending is what a paused run waits for: an ask node's question, or the
// approval a node needs before it does anything. It is taken once, when the
// run pauses, and kept with the run: what was shown and its digest are not
// recomputed when the answer comes.
type Pending struct {
	// Kind is PendingAsk or PendingApproval.
	Kind string `json:"kind"`
	// Node is the id of the node that waits.
	Node string `json:"node"`
	// Question is the ask node's question, or the approval's ask, with
	// every {{channel}} filled in.
	Question string `json:"question"`
	// Show is, for an approval, the channels its show names and their
	// values — never the whole state. A channel holding nothing is there
	// as null.
	Show map[string]any `json:"show,omitempty"`
	// Account is, for an approval, the case for saying yes, read from the
	// channel its why names: a string trimmed, a list of strings joined
	// with newlines. Anything else, and anything empty, is "" — and
	// nothing should be drawn for it.
	Account string `json:"account,omitempty"`
	// Amounts is, for an approval, the amounts written in Question and then
	// Account (text.AmountsIn), so a card can show each as a value and a
	// currency rather than a person reading them out of prose. It is read
	// from what the digest covers and is not itself in the digest; at most
	// approvals.MaxAmounts.
	Amounts []text.Amount `json:"amounts,omitempty"`
	// Digest is, for an approval, approvals.Digest(Show, Account): the
	// digest of the operation put in front of the person. The board stores
	// it and hands it back with the decision.
	Digest string `json:"digest,omitempty"`
	// Expects is "file" when an ask's answer goes to a file channel, and
	// Accept is then that channel's media types: somewhere to drop a file
	// rather than somewhere to type.
	Expects string `json:"expects,omitempty"`
	Accept  string `json:"accept,omitempty"`
	// At is when the run paused.
	At time.Time `json:"at"`
	// Agent is, for a question an agent node's child asks, the
	// registered agent whose run waits: the parent waits on it, and
	// answering the parent answers the child. "" for the flow's own.
	Agent string `json:"agent,omitempty"`
	// Run is the id of the run that waits (RunOf), as Result.Run names it;
	// not kept with the pause, and filled in by Graph.Pending and when the
	// run pauses.
	Run string `json:"-"`
}

// approvalPending is the question a node's approval puts, taken from the
// state the node would have run with.
func (r *run) approvalPending(v State, n *gnode) (*Pending, error) {
	a := n.Approval
	show := make(map[string]any, len(a.Show))
	for _, ch := range a.Show {
		// A channel, or a field of one ("order.amount").
		val, _ := lookup(v, ch)
		show[ch] = clone(val)
	}
	var account string
	if a.Why != "" {
		why, _ := lookup(v, a.Why) // a channel, or a field of one
		account = approvals.AccountOf(why)
	}
	digest, err := approvals.Digest(show, account)
	if err != nil {
		return nil, fmt.Errorf("flow: node %q: the approval's digest: %w", n.ID, err)
	}
	question := render(a.Ask, v)
	return &Pending{
		Kind:     PendingApproval,
		Node:     n.ID,
		Question: question,
		Show:     show,
		Account:  account,
		Amounts:  approvals.AmountsOf(question, account),
		Digest:   digest,
		At:       r.g.now().UTC(),
	}, nil
}

// askPending is an ask node's question.
func (r *run) askPending(v State, n *gnode) *Pending {
	p := &Pending{Kind: PendingAsk, Node: n.ID, Question: render(n.Ask, v), At: r.g.now().UTC()}
	if c := r.g.flow.State[n.Output]; c != nil && c.Type == ChannelFile {
		p.Expects, p.Accept = ChannelFile, c.Accept
	}
	return p
}

// answer applies a person's answer to the task that waits for it.
func (r *run) answer(t *task, a any) {
	if t.delegated != nil {
		// The question is the child's: the answer goes to it, and the
		// node runs on to hand it over.
		t.answered, t.answer, t.status, t.pending = true, a, taskTodo, nil
		return
	}
	switch t.pending.Kind {
	case PendingApproval:
		if approvedAnswer(a) {
			t.approved, t.status = true, taskTodo
			break
		}
		// Refused means never ran: the node is not called at all.
		t.status = taskDone
		t.writes, t.sends = nil, nil
		t.next = nil
		if to := t.node.Approval.OnReject; to != "" {
			t.next = []string{to}
		}
	case PendingAsk:
		t.answered, t.answer, t.status = true, a, taskTodo
	}
	t.pending = nil
}

// approvedAnswer reports whether an approval's answer is yes: true; yes,
// y, approve, approved, ok or true, trimmed, in any case; or
// {"approved": true}. Anything unrecognised is a no, because silence must
// not count as consent.
func approvedAnswer(a any) bool {
	switch a := a.(type) {
	case bool:
		return a
	case string:
		switch strings.ToLower(strings.TrimSpace(a)) {
		case "yes", "y", "approve", "approved", "ok", "true":
			return true
		}
	case map[string]any:
		yes, _ := a["approved"].(bool)
		return yes
	}
	return false
}

// emptyAnswer reports an answer that never reaches the flow: nil, false, 0
// or "".
func emptyAnswer(a any) bool {
	switch a := a.(type) {
	case nil:
		return true
	case bool:
		return !a
	case string:
		return strings.TrimSpace(a) == ""
	case float64:
		return a == 0
	case int:
		return a == 0
	}
	return false
}
