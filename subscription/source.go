package subscription

// Source names where an answer came from. Every [Answer], and every list of
// what is switched on, carries one, so a refusal, a log line or the board can
// say why.
type Source string

const (
	// NoBoard: no board is configured, so the flow's declaration is what is
	// switched on.
	NoBoard Source = "no-board"
	// FromBoard: the board said so on the link that is up now.
	FromBoard Source = "board"
	// FromMemory: the board's last word, kept on disk and used while the
	// board is unreachable (or until it speaks after a restart).
	FromMemory Source = "memory"
	// NobodyDecided: a board is configured and has never spoken, and there is
	// no memory of it speaking, so nothing is switched on.
	NobodyDecided Source = "nobody-decided"
)
