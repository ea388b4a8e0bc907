// Package identity is who may work the board and who is calling: the
// board's signed tokens (operator and agent, each of its own kind, never
// accepted as another), the people it knows and their argon2id passwords
// and verify secrets, the one-time setup links, and the stored half of a
// web sign-in (Sessions).
//
// Everything here is kept in the store and every change is written to the
// audit log in the same transaction. The package knows nothing of HTTP or
// RPCs: the board reads tokens and cookies off requests, and puts the
// Caller it authenticated into the request's context (NewContext).
package identity
