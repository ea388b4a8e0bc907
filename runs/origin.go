package runs

import "context"

type originKey struct{}

type origin struct{ by, who string }

// StartedBy returns ctx saying what starts the run made on it — ByChat,
// ByBoard, ByCLI — and who, when it is known (the person in the chat, the
// operator who fired it); a Recorder puts them in the run's record. Whoever
// starts a run sets it.
func StartedBy(ctx context.Context, by, who string) context.Context {
	return context.WithValue(ctx, originKey{}, origin{by: by, who: who})
}

// startedBy is what StartedBy put on ctx.
func startedBy(ctx context.Context) (by, who string) {
	o, _ := ctx.Value(originKey{}).(origin)
	return o.by, o.who
}

type triggerKey struct{}

// WithTrigger returns ctx saying the run made on it was started by
// trigger t; a Recorder puts it in the run's record. StartedBy with
// ByTrigger says the rest.
func WithTrigger(ctx context.Context, t Trigger) context.Context {
	return context.WithValue(ctx, triggerKey{}, &t)
}

// triggerOf is what WithTrigger put on ctx, or nil.
func triggerOf(ctx context.Context) *Trigger {
	t, _ := ctx.Value(triggerKey{}).(*Trigger)
	return t
}
