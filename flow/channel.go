package flow

import "encoding/json"

// Channel is one state channel a flow declares.
type Channel struct {
	// Type is what the channel holds, one of ChannelTypes (v0.7; "file"
	// v0.9). Empty: not said.
	Type string
	// Description says what the channel holds (v0.7).
	Description string
	// Reducer says how two writes in one step combine: "append", "merge",
	// or a name looked up in the registry. Empty: the last write wins, and
	// two writes in one step are an error at run time.
	Reducer string
	// Default is the channel's value at the start of a run, as given.
	// Defaults are cloned per run.
	Default json.RawMessage
	// Remembers carries the channel from one message of a conversation to
	// the next (v0.9). A reducer is not a memory.
	Remembers bool
	// Accept is the media types a file channel takes, such as "image/*"
	// (v0.9, file channels only).
	Accept string
}

// The channel types. "list", never "array".
const (
	ChannelString  = "string"
	ChannelNumber  = "number"
	ChannelBoolean = "boolean"
	ChannelList    = "list"
	ChannelObject  = "object"
	ChannelFile    = "file"
)

// ChannelTypes lists every channel type, in the order the docs give them.
var ChannelTypes = []string{ChannelString, ChannelNumber, ChannelBoolean, ChannelList, ChannelObject, ChannelFile}

// The reducers the compiler knows itself. Any other name is looked up in
// the registry.
const (
	ReducerAppend = "append"
	ReducerMerge  = "merge"
)

// Reducers lists the reducers the compiler knows itself.
var Reducers = []string{ReducerAppend, ReducerMerge}

// Channels the engine provides without a declaration, which a prompt may
// read.
const (
	// HistoryChannel holds one entry per finished turn of a conversation:
	// { at, asked, answered }. Only a conversation has it.
	HistoryChannel = "history"
	// ErrorChannel holds the last failure a node's onError caught, as
	// { node, message }.
	ErrorChannel = "__error"
)
