package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// MemoryVersion is the version of the record a thread's memory is kept in:
// "v" in every record.
const MemoryVersion = 1

// timeFormat is how the engine writes a time into state: RFC 3339 in UTC,
// to the nanosecond.
const timeFormat = time.RFC3339Nano

// memoryRecord is what a thread remembers between runs: the value of each
// channel the flow marks remembers, and a conversation's history.
type memoryRecord struct {
	V        int            `json:"v"`
	Channels map[string]any `json:"channels"`
}

// recall puts back what the run's thread remembers. A channel the flow no
// longer remembers is left out.
func (r *run) recall(ctx context.Context) error {
	data, ok, err := r.g.memory.Get(ctx, r.thread)
	if err != nil {
		return fmt.Errorf("flow: thread %q: reading its memory: %w", r.thread, err)
	}
	if !ok {
		return nil
	}
	var m memoryRecord
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("%w: thread %q: its memory: %v", ErrCheckpoint, r.thread, err)
	}
	if m.V != MemoryVersion {
		return fmt.Errorf("%w: thread %q: memory version %d, and this build reads version %d", ErrCheckpoint, r.thread, m.V, MemoryVersion)
	}
	for _, ch := range r.g.remember {
		if v, ok := m.Channels[ch]; ok {
			r.state[ch] = v
		}
	}
	if h, ok := m.Channels[HistoryChannel]; ok && r.g.flow.Conversation {
		r.state[HistoryChannel] = h
	}
	return nil
}

// keep stores what the run's thread remembers, as the run ended.
func (r *run) keep(ctx context.Context) error {
	m := memoryRecord{V: MemoryVersion, Channels: map[string]any{}}
	for _, ch := range r.g.remember {
		if v, ok := r.state[ch]; ok {
			m.Channels[ch] = v
		}
	}
	if r.g.flow.Conversation {
		m.Channels[HistoryChannel] = r.state[HistoryChannel]
	}
	data, err := json.Marshal(m)
	if err == nil {
		err = r.g.memory.Put(ctx, r.thread, data)
	}
	if err != nil {
		return fmt.Errorf("flow: thread %q: the run ended, and what it remembers could not be kept: %w", r.thread, err)
	}
	return nil
}

// Remembers reports whether runs of f carry anything from one message of a
// thread to the next — a conversation's history, or a channel marked
// remembers — and so want a durable BuildOptions.Memory.
func Remembers(f *Flow) bool {
	if f == nil {
		return false
	}
	if f.Conversation {
		return true
	}
	for _, c := range f.State {
		if c != nil && c.Remembers {
			return true
		}
	}
	return false
}
