package board

// Temporary: stands in for librarytrust.go until it is merged; removed then.

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"slices"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/publisherkey"
	"github.com/symphonix/symphonix/packages"
)

type scopeTrust struct {
	scope     string
	threshold int
	keys      map[string]ed25519.PublicKey
}

func (b *Board) trustOf(ctx context.Context, client *ent.Client, scope string) (scopeTrust, error) {
	t := scopeTrust{scope: scope, keys: map[string]ed25519.PublicKey{}}
	s, err := client.PackageScope.Get(ctx, scope)
	if ent.IsNotFound(err) {
		return t, nil
	}
	if err != nil {
		return t, err
	}
	t.threshold = s.Threshold
	keys, err := client.PublisherKey.Query().Where(publisherkey.PublisherIn(s.Publishers...), publisherkey.RevokedAtIsNil()).All(ctx)
	if err != nil {
		return t, err
	}
	for _, k := range keys {
		t.keys[k.ID] = ed25519.PublicKey(k.PublicKey)
	}
	return t, nil
}

func (t scopeTrust) proto() *boardv1.Trust {
	p := &boardv1.Trust{Scope: t.scope, Threshold: int32(t.threshold)}
	for id, k := range t.keys {
		p.Keys = append(p.Keys, &boardv1.PublisherKey{KeyId: id, PublicKey: packages.FormatPublicKey(k)})
	}
	slices.SortFunc(p.Keys, func(a, b *boardv1.PublisherKey) int {
		if a.KeyId < b.KeyId {
			return -1
		}
		return 1
	})
	return p
}

func (t scopeTrust) check(env packages.Envelope, digest string) ([]string, error) {
	if t.threshold < 1 {
		return nil, errors.New("scope admits nothing")
	}
	var keys []ed25519.PublicKey
	for _, k := range t.keys {
		keys = append(keys, k)
	}
	var signers []string
	for _, s := range env.Signatures {
		k, ok := t.keys[s.KeyID]
		if !ok || slices.Contains(signers, s.KeyID) {
			continue
		}
		one := packages.Envelope{Payload: env.Payload, PayloadType: env.PayloadType, Signatures: []packages.Signature{s}}
		if packages.VerifySignature(one, digest, []ed25519.PublicKey{k}, 1) == nil {
			signers = append(signers, s.KeyID)
		}
	}
	if err := packages.VerifySignature(env, digest, keys, t.threshold); err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	return signers, nil
}

type running struct {
	names []string
	count int
}

func (b *Board) agentsRunning(ctx context.Context, digests []string) (map[string]running, error) {
	return map[string]running{}, nil
}
