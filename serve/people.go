package serve

import (
	"context"
	"slices"
	"time"

	"github.com/symphonix/symphonix/agent"
)

// may reports whether visitor may see thread: they started it, or they are
// a person in it, or they are the person who started it.
func (c *conversations) may(thread, visitor string) bool {
	if visitor == "" {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.who[thread]
	if w == nil {
		return false
	}
	if w.Visitor == visitor {
		return true
	}
	me, ok := c.visitors[visitor]
	if !ok {
		return false
	}
	if starter, ok := c.visitors[w.Visitor]; ok && starter.Address == me.Address {
		return true
	}
	return slices.ContainsFunc(w.People, func(p Person) bool { return p.Address == me.Address })
}

// claim gives thread to visitor if nobody has it: it is not in the index
// and, by exists, not in the waiting store. It reports whether visitor may
// use thread, claimed now or already.
func (c *conversations) claim(ctx context.Context, thread, visitor string, exists bool, now time.Time) bool {
	if visitor == "" {
		return false
	}
	c.mu.Lock()
	_, known := c.updated[thread]
	if !known && !exists && c.who[thread] == nil {
		c.who[thread] = &threadWho{Visitor: visitor}
		c.touchLocked(thread, now)
		c.saveLogged(ctx)
		c.mu.Unlock()
		return true
	}
	c.mu.Unlock()
	return c.may(thread, visitor)
}

// addPerson records that p is in thread, and that the visitor who started
// it — and visitor, when not "" (the one who verified) — is p. A person
// already in the thread is updated in place.
func (c *conversations) addPerson(ctx context.Context, thread string, p Person, visitor string, now time.Time) {
	p.At = p.At.UTC()
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.who[thread]
	if w == nil {
		w = &threadWho{}
		c.who[thread] = w
	}
	w.People = slices.DeleteFunc(w.People, func(q Person) bool { return q.Address == p.Address })
	w.People = append(w.People, p)
	if n := len(w.People); n > maxPeople {
		w.People = w.People[n-maxPeople:]
	}
	for _, v := range []string{w.Visitor, visitor} {
		if v != "" && !isBoardVisitor(v) { // a board visitor is who the board said, always
			c.visitors[v] = p
		}
	}
	c.touchLocked(thread, now)
	c.saveLogged(ctx)
}

// boardPerson records that visitor, a person asking through the board, is
// p. It is kept with the index the next time the index is written (a
// visitor is kept only with a thread they started).
func (c *conversations) boardPerson(visitor string, p Person) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if q, ok := c.visitors[visitor]; !ok || q.Address != p.Address {
		c.visitors[visitor] = p
	}
}

// people is who is in thread, in the order they came in.
func (c *conversations) people(thread string) []Person {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w := c.who[thread]; w != nil {
		return slices.Clone(w.People)
	}
	return nil
}

// person is who visitor is, if a thread of theirs was paired or verified.
func (c *conversations) person(visitor string) (Person, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.visitors[visitor]
	return p, ok && visitor != ""
}

// pointer is the pointer to thread, as list has it; false when the agent
// holds no such thread.
func (c *conversations) pointer(ctx context.Context, a *agent.Agent, thread string) (Conversation, bool, error) {
	c.mu.Lock()
	conv := Conversation{Thread: thread, Updated: c.updated[thread], People: addresses(c.who[thread])}
	c.mu.Unlock()
	p, err := a.Graph.Pending(ctx, thread)
	if err != nil {
		return Conversation{}, false, err
	}
	if p != nil {
		conv.Waiting = true
		if p.At.After(conv.Updated) {
			conv.Updated = p.At
		}
	}
	return conv, !conv.Updated.IsZero(), nil
}

// addresses is the addresses of the people in w, sorted.
func addresses(w *threadWho) []string {
	if w == nil || len(w.People) == 0 {
		return nil
	}
	out := make([]string, 0, len(w.People))
	for _, p := range w.People {
		out = append(out, p.Address)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
