package agentlink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/symphonix/symphonix/receipts"
)

// An agent acts on a decision only when its receipt verifies: signed by
// one of the board's receipt keys, valid when it signed, and naming the
// very decision — the approval, its run and node, the digest, what was
// said (package receipts). The keys are read from the board the link is
// on (/.well-known/receipt-keys.json) when first needed, and again when a
// receipt names a key the link has not seen (the board rotated its key),
// at most once every keysRefetch. A decision whose receipt does not verify
// is logged and not delivered: the board sends it again on the next link,
// and a fixed board's receipt is then acted on.
const (
	keysRefetch = 10 * time.Second
	// maxKeySetBytes: the most of a key set the link reads.
	maxKeySetBytes = 256 << 10
)

// ErrNoReceipt: a decision came without a receipt.
var ErrNoReceipt = errors.New("agentlink: the decision has no receipt")

// receiptKeys is a link's copy of the board's receipt keys.
type receiptKeys struct {
	mu      sync.Mutex
	keys    receipts.KeySet
	fetched time.Time
}

// checkReceipt verifies d's receipt and that it is d's.
func (l *Link) checkReceipt(ctx context.Context, d Decision) error {
	if d.Receipt == "" {
		return ErrNoReceipt
	}
	keys, err := l.receiptKeySet(ctx, false)
	if err != nil {
		return err
	}
	r, err := receipts.Verify(d.Receipt, keys)
	if errors.Is(err, receipts.ErrUnknownKey) {
		if keys, err = l.receiptKeySet(ctx, true); err != nil {
			return err
		}
		r, err = receipts.Verify(d.Receipt, keys)
	}
	if err != nil {
		return err
	}
	return r.Binds(d.ApprovalID, d.Run, d.Node, d.Digest, d.Say)
}

// receiptKeySet is the board's key set: the one read before, unless there
// is none or again is set and keysRefetch has passed since the last read.
func (l *Link) receiptKeySet(ctx context.Context, again bool) (receipts.KeySet, error) {
	k := &l.receiptKeys
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.keys != nil && (!again || time.Since(k.fetched) < keysRefetch) {
		return k.keys, nil
	}
	if !k.fetched.IsZero() && time.Since(k.fetched) < keysRefetch && k.keys == nil {
		return nil, errors.New("agentlink: the board's receipt keys could not be read; trying again shortly")
	}
	k.fetched = time.Now()
	keys, err := l.fetchReceiptKeys(ctx)
	if err != nil {
		return nil, err
	}
	k.keys = keys
	return keys, nil
}

// fetchReceiptKeys reads the key set of the board the link is on.
func (l *Link) fetchReceiptKeys(ctx context.Context) (receipts.KeySet, error) {
	u := l.board().JoinPath("/.well-known/receipt-keys.json")
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: l.cfg.TLS}}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("agentlink: read the board's receipt keys: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxKeySetBytes+1))
	if err != nil {
		return nil, fmt.Errorf("agentlink: read the board's receipt keys: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("agentlink: read the board's receipt keys: %s", resp.Status)
	}
	if len(raw) > maxKeySetBytes {
		return nil, fmt.Errorf("agentlink: the board's receipt keys: more than %d bytes", maxKeySetBytes)
	}
	return receipts.ParseKeySet(raw)
}
