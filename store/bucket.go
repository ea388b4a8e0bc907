package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/symphonix/symphonix/ent"
)

// takeToken is one statement: a bucket met for the first time starts
// full; one met again is refilled for the time since it was last taken
// from (never beyond burst, never for a clock that went back) and gives a
// token if it has one. A bucket with none is left as it was, and the
// statement returns no row.
const takeToken = `
INSERT INTO rate_buckets (id, tokens, at) VALUES ($1, $2::float8 - 1, $4::timestamptz)
ON CONFLICT (id) DO UPDATE SET
	tokens = LEAST($2::float8, rate_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM ($4::timestamptz - rate_buckets.at))::float8) * $3::float8) - 1,
	at = GREATEST(rate_buckets.at, $4::timestamptz)
WHERE LEAST($2::float8, rate_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM ($4::timestamptz - rate_buckets.at))::float8) * $3::float8) >= 1
RETURNING tokens`

// TakeToken takes one token, as of now, from the bucket id in the store's
// rate_buckets (burst deep, refilled at rate a second), in one statement
// every board sharing the store sees at once. It reports whether there was
// a token to take. It returns ErrNoNotifications for a store that is not
// PostgreSQL: a board with a store of its own keeps its buckets in memory.
func TakeToken(ctx context.Context, client *ent.Client, id string, burst, rate float64, now time.Time) (bool, error) {
	db, err := poolOf(client)
	if err != nil {
		return false, err
	}
	var left float64
	err = db.QueryRowContext(ctx, takeToken, id, burst, rate, now.UTC()).Scan(&left)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}
