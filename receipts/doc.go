// Package receipts is the board's signed proof of a decision on an
// approval: a JWS anyone can check offline with the board's public receipt
// keys, and that an agent checks before it acts on the decision. It holds
// the receipt's contents, signing, the key set as published, and
// verifying; the board keeps the keys and the agent fetches them.
package receipts
