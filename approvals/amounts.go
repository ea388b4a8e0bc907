package approvals

import "github.com/symphonix/symphonix/text"

// MaxAmounts is the most amounts an approval's card shows.
const MaxAmounts = 16

// AmountsOf reads the amounts a person wrote in an approval's question and
// in its account (text.AmountsIn), the question's first, at most
// MaxAmounts; nil when there is none. The agent's card and the board's
// show the same list. The amounts are read for people: they are never part
// of the digest, which covers what is shown and the account as written.
func AmountsOf(question, account string) []text.Amount {
	as := append(text.AmountsIn(question), text.AmountsIn(account)...)
	if len(as) > MaxAmounts {
		as = as[:MaxAmounts]
	}
	return as
}
