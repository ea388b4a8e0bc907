package runs

import "fmt"

// EnvDetail is the environment variable that says how much of a run the
// agent sends its board.
const EnvDetail = "MONITOR_DETAIL"

// Detail is how much of a run the agent sends.
type Detail string

const (
	// DetailMetadata sends what ran, when, which nodes, how long, what
	// failed and what it spent, and never what a run was given or gave
	// back: those are named in Run.Withheld. The default.
	DetailMetadata Detail = ""
	// DetailFull sends a run's input and output too, without the named
	// secrets, each while it is at most MaxPayload bytes as JSON.
	DetailFull Detail = "full"
)

// ParseDetail reads MONITOR_DETAIL: "" is DetailMetadata, "full"
// DetailFull, and anything else an error naming the variable.
func ParseDetail(s string) (Detail, error) {
	switch d := Detail(s); d {
	case DetailMetadata, DetailFull:
		return d, nil
	}
	return "", fmt.Errorf("%s=%q: want full, or unset for runs without their input and output", EnvDetail, s)
}
