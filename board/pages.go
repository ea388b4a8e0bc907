package board

import (
	"strconv"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/proto"
)

// Page sizes of the List RPCs (docs/limits.md): a page_size of 0 is the
// default, and one above the most is the most.
const (
	defaultPageSize = 100
	maxPageSize     = 1000
	// ListApprovals' pages are smaller: an approval can be 150 KiB.
	defaultApprovalPageSize = 50
	maxApprovalPageSize     = 500
)

// listPage is one page of a List RPC as it is filled: how many items it may
// hold (and at most MaxListBytes of them), the position it starts after
// (from the request's page_token), and the position of the last item taken,
// for the next page's token.
type listPage struct {
	tokens  pageTokens
	method  string
	filters []string
	// after is the position the page starts after; nil for the first page.
	after  []string
	budget listBudget
	last   []string
	more   bool
}

// page starts the page a List request asks for. method names the list;
// filters are the request's filters, each as a string, which a page token
// must have been made for; keys is how many strings a position of the
// list holds. Its error is an invalid_argument naming the field.
func (b *Board) page(method string, size int32, token string, def, most, keys int, filters ...string) (*listPage, error) {
	if size < 0 {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "page_size: %d, must not be negative", size)
	}
	n := int(size)
	if n == 0 {
		n = def
	}
	p := &listPage{tokens: b.pages, method: method, filters: filters, budget: listBudget{max: min(n, most)}}
	if token == "" {
		return p, nil
	}
	after, err := b.pages.open(token, method, filters)
	if err != nil {
		return nil, err
	}
	if len(after) != keys {
		return nil, errMalformedToken
	}
	p.after = after
	return p, nil
}

// take reports whether m, at position key in the list's order, is on the
// page, and counts it when it is. Once one is not, the page is full, and
// its next token starts after the last one taken.
func (p *listPage) take(m proto.Message, key ...string) bool {
	if p.more || !p.budget.take(m) {
		p.more = true
		return false
	}
	p.last = key
	return true
}

// afterName is the position a page of a list by name starts after: ""
// for the first page.
func (p *listPage) afterName() string {
	if p.after == nil {
		return ""
	}
	return p.after[0]
}

// next is the next page's token: "" when nothing followed the page.
func (p *listPage) next() string {
	if !p.more {
		return ""
	}
	return p.tokens.make(p.method, p.filters, p.last...)
}

// Positions in page tokens are strings; these write and read the times and
// numbers in them.

func microString(t time.Time) string { return strconv.FormatInt(t.UnixMicro(), 10) }

func int64String(n int64) string { return strconv.FormatInt(n, 10) }

// positionTime reads a time microString wrote; a token the board signed
// always holds one, so a failure is a malformed token.
func positionTime(s string) (time.Time, error) {
	n, err := positionInt(s)
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMicro(n).UTC(), nil
}

// positionInt reads a number int64String wrote.
func positionInt(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errMalformedToken
	}
	return n, nil
}

var errMalformedToken = connect.NewError(connect.CodeInvalidArgument, "page_token: malformed")
