package triggers

// FileName is the plain trigger file's name; a flow named NAME.json may
// have its own, NAME.triggers.json, which wins (FileFor).
const FileName = "triggers.json"

// File is a trigger file as written: which flow it starts, and its
// triggers. Load reads one; Problems says what is wrong with it.
type File struct {
	// Flow is the flow the triggers start, relative to the file: the only
	// place a flow is chosen, so an occurrence can never name one.
	// Required.
	Flow string `json:"flow"`
	// Triggers, each with an id unique in the file.
	Triggers []Trigger `json:"triggers"`
}

// Kind is what makes a trigger occur.
type Kind string

// The kinds.
const (
	// KindSchedule: a five-field cron schedule in an IANA time zone.
	KindSchedule Kind = "schedule"
	// KindWebhook: an HTTP request to the agent's trigger listener.
	KindWebhook Kind = "webhook"
)

// Overlap is what a new occurrence does while a run the same trigger
// started is still going.
type Overlap string

// The overlap policies.
const (
	// OverlapSkip, the default: the occurrence starts nothing, and says so.
	OverlapSkip Overlap = "skip"
	// OverlapQueue: it waits its turn, up to Trigger.QueueLimit waiting.
	OverlapQueue Overlap = "queue"
)

// Trigger is one trigger of a file.
type Trigger struct {
	// ID names it in reports and on the board: 1 to 64 of letters, digits,
	// '-' and '_'. Required, unique in the file.
	ID string `json:"id"`
	// Kind: "schedule" or "webhook". Required.
	Kind Kind `json:"kind"`
	// Schedule, for a schedule: five cron fields (minute, hour, day of
	// month, month, day of week).
	Schedule string `json:"schedule,omitempty"`
	// TimeZone, for a schedule: an IANA zone such as "Europe/Paris";
	// "UTC" when empty.
	TimeZone string `json:"timeZone,omitempty"`
	// CatchUp, for a schedule: after the agent was down over one or more
	// occurrences, run the latest of them once when it comes back. Off by
	// default: missed occurrences are not replayed.
	CatchUp bool `json:"catchUp,omitempty"`
	// Method, for a webhook: "POST" when empty.
	Method string `json:"method,omitempty"`
	// Path, for a webhook: the path it answers on the trigger listener,
	// starting with "/". Required for a webhook.
	Path string `json:"path,omitempty"`
	// Secret, for a webhook: the name of the environment variable holding
	// the shared secret requests must be signed with (never the secret
	// itself); unsigned requests are then refused.
	Secret string `json:"secret,omitempty"`
	// Input maps what an occurrence offers to the flow's inputs, filled by
	// the flow's own template rules: a string that is only "{{path}}"
	// passes the value, any other string has each {{path}} written in.
	// Keys are the flow's inputs.
	Input map[string]any `json:"input,omitempty"`
	// Overlap: "skip" (the default) or "queue".
	Overlap Overlap `json:"overlap,omitempty"`
	// QueueLimit: with "queue", how many occurrences may wait; 1 to 100,
	// 10 when empty.
	QueueLimit int `json:"queueLimit,omitempty"`
	// Deliver, when set, posts each run's result somewhere.
	Deliver *Delivery `json:"deliver,omitempty"`
}

// Delivery is where a triggered run's result goes.
type Delivery struct {
	// URLEnv names the environment variable holding the URL to post to (an
	// incoming-webhook URL is a credential, so the file never holds it).
	// Required.
	URLEnv string `json:"urlEnv"`
	// Body is the JSON body, filled by the same template rules as Input
	// from the run's outputs and the occurrence; empty: {"text": …} with
	// the outputs laid out for a chat app.
	Body any `json:"body,omitempty"`
	// Attempts: how many times to try, 1 to 10; 5 when empty.
	Attempts int `json:"attempts,omitempty"`
}
