package audit

import "fmt"

// Chain checks a log one entry at a time, in seq order, exactly as Verify
// does: for a reader that has the entries from somewhere other than the
// store, such as the board's API (AuditService.ListAudit). The zero Chain
// expects seq 1.
type Chain struct {
	r VerifyResult
}

// Next checks e, the entry after the ones before. It reports false once
// an entry is bad; Result then says which and why, and Next checks
// nothing more.
func (c *Chain) Next(e Entry) bool {
	if c.r.Why != nil {
		return false
	}
	want := c.r.Entries + 1
	switch {
	case e.Seq > want:
		c.r.Bad, c.r.Why = want, fmt.Errorf("seq %d %w", want, ErrMissing)
		return false
	case e.Seq < want: // a seq below 1, or one repeated
		c.r.Bad, c.r.Why = e.Seq, ErrUnlinked
		return false
	case e.Prev != c.r.Head:
		c.r.Bad, c.r.Why = e.Seq, ErrUnlinked
		return false
	}
	if h, err := hashOf(e); err != nil || h != e.Hash {
		c.r.Bad, c.r.Why = e.Seq, ErrModified
		return false
	}
	if e.Content != "" { // changed before it was chained
		if h, err := contentOf(e); err != nil || h != e.Content {
			c.r.Bad, c.r.Why = e.Seq, ErrModified
			return false
		}
	}
	c.r.Entries, c.r.Head = e.Seq, e.Hash
	return true
}

// Result is what the entries checked so far come to: OK with their
// number and the last one's hash, or the first bad one.
func (c *Chain) Result() VerifyResult {
	return c.r
}
