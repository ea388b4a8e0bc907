package board

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/receiptkey"
	"github.com/symphonix/symphonix/receipts"
)

// Every decision is signed: a receipt (package receipts) written with the
// decision, in its transaction, and sent with it to the agent. The keys
// are the store's (receipt_keys), shared by its boards: the newest whose
// not_before has come and that is not retired signs; every key, retired or
// not, is published at /.well-known/receipt-keys.json so that old receipts
// stay verifiable. Each board reads the keys at start and every
// receiptKeysEvery, so a key rotated on one board (board receipt
// rotate-key, which starts the new key a little later) signs on every
// board once its not_before comes.
const receiptKeysEvery = 10 * time.Second

// receiptKeys is a board's copy of the store's receipt keys.
type receiptKeys struct {
	mu        sync.Mutex
	all       []*ent.ReceiptKey // oldest first
	published []byte            // the key set as JSON
	read      time.Time
}

// loadReceiptKeys reads the store's receipt keys, making the first when
// there is none.
func (b *Board) loadReceiptKeys(ctx context.Context) error {
	all, err := b.db.ReceiptKey.Query().Order(ent.Asc(receiptkey.FieldNotBefore), ent.Asc(receiptkey.FieldCreatedAt), ent.Asc(receiptkey.FieldID)).All(ctx)
	if err != nil {
		return err
	}
	if len(all) == 0 {
		if _, err := NewReceiptKey(ctx, b.db, b.now()); err != nil {
			return err
		}
		return b.loadReceiptKeys(ctx)
	}
	raw, err := ReceiptKeySet(all)
	if err != nil {
		return err
	}
	r := &b.receipts
	r.mu.Lock()
	r.all, r.published, r.read = all, raw, b.now()
	r.mu.Unlock()
	return nil
}

// ReceiptKeySet is the key set of rows, the store's receipt keys, as the
// board publishes it.
func ReceiptKeySet(rows []*ent.ReceiptKey) ([]byte, error) {
	var set receipts.KeySet
	for _, k := range rows {
		if len(k.PrivateKey) != ed25519.SeedSize {
			return nil, fmt.Errorf("receipt key %s: bad length %d", k.ID, len(k.PrivateKey))
		}
		set = append(set, publicKeyOf(k))
	}
	return json.Marshal(set)
}

// publicKeyOf is k's public half, as published.
func publicKeyOf(k *ent.ReceiptKey) receipts.Key {
	pub := ed25519.NewKeyFromSeed(k.PrivateKey).Public().(ed25519.PublicKey)
	out := receipts.Key{ID: k.ID, Public: pub, NotBefore: k.NotBefore}
	if k.RetiredAt != nil {
		out.NotAfter = *k.RetiredAt
	}
	return out
}

// NewReceiptKey makes a receipt key that signs from notBefore on, and
// retires, as of notBefore, the keys signing before it. The boards of the
// store read it within receiptKeysEvery: start it at least that late, so
// that every board publishes it, and has it to sign with, before it
// begins.
func NewReceiptKey(ctx context.Context, db *ent.Client, notBefore time.Time) (string, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", err
	}
	id := make([]byte, 8)
	if _, err := rand.Read(id); err != nil {
		return "", err
	}
	kid := "r-" + hex.EncodeToString(id)
	notBefore = notBefore.UTC().Truncate(time.Second)
	tx, err := db.Tx(ctx)
	if err != nil {
		return "", err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ReceiptKey.Update().Where(receiptkey.RetiredAtIsNil(), receiptkey.NotBeforeLT(notBefore)).SetRetiredAt(notBefore).Save(ctx); err != nil {
		return "", err
	}
	if err := tx.ReceiptKey.Create().SetID(kid).SetPrivateKey(priv.Seed()).SetNotBefore(notBefore).SetCreatedAt(time.Now().UTC()).Exec(ctx); err != nil {
		return "", err
	}
	return kid, tx.Commit()
}

// refreshReceiptKeys reads the keys again when receiptKeysEvery has
// passed; a failure is logged, and the keys read before serve on.
func (b *Board) refreshReceiptKeys(ctx context.Context, now time.Time) {
	b.receipts.mu.Lock()
	due := now.Sub(b.receipts.read) >= receiptKeysEvery
	b.receipts.mu.Unlock()
	if !due {
		return
	}
	if err := b.loadReceiptKeys(ctx); err != nil {
		b.log.WarnContext(ctx, "read the receipt keys", "err", err.Error())
	}
}

// errNoReceiptKey: no key signs now (the only keys start later).
var errNoReceiptKey = errors.New("no receipt key signs now")

// signReceipt signs r, the decision recorded by the audit entry rec, with
// the key signing at now, setting r.Audit to rec's content hash.
func (b *Board) signReceipt(r receipts.Receipt, rec audit.Record, now time.Time) (string, error) {
	content, err := audit.RecordContent(rec)
	if err != nil {
		return "", err
	}
	r.Audit = content
	b.receipts.mu.Lock()
	var signer *ent.ReceiptKey
	for _, k := range b.receipts.all {
		if !k.NotBefore.After(now) && (k.RetiredAt == nil || now.Before(*k.RetiredAt)) {
			signer = k // the newest that signs now
		}
	}
	b.receipts.mu.Unlock()
	if signer == nil {
		return "", errNoReceiptKey
	}
	return receipts.Sign(ed25519.NewKeyFromSeed(signer.PrivateKey), signer.ID, r, now)
}

// receiptOf is the receipt of row's decision, before it is written: say,
// who and the votes, at now, under rule r (nil for none).
func receiptOf(row *ent.Approval, say string, who []string, votes []*ent.Vote, r *ent.Rule, now time.Time) receipts.Receipt {
	out := receipts.Receipt{
		Approval: row.ID, Agent: row.Agent, Run: row.Run, Node: row.Node, Thread: row.Thread,
		Digest: row.Digest, Say: say, Who: who, DecidedAt: now,
	}
	for _, v := range votes {
		out.Votes = append(out.Votes, receipts.Vote{Who: v.Person, At: v.At})
	}
	if r != nil {
		out.Rule, out.RuleVersion = r.ID, r.UpdatedAt.UTC().Format(time.RFC3339Nano)
	}
	return out
}

// serveReceiptKeys serves the key set, as last read: asked by anyone,
// answered from memory.
func (b *Board) serveReceiptKeys(w http.ResponseWriter, _ *http.Request) {
	b.receipts.mu.Lock()
	raw := b.receipts.published
	b.receipts.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "max-age=10")
	_, _ = w.Write(raw)
}
