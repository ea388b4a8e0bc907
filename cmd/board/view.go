package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// protoJSON is an API object as --output json prints it: the proto's own
// field names (snake_case), every field present (zero values too), enums
// by name. encoding/json compacts or indents it, so its spacing is stable.
func protoJSON(m proto.Message) json.RawMessage {
	b, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(m)
	if err != nil {
		// Only invalid UTF-8 fails, which the board never sends: its
		// messages were unmarshalled (and so checked) by this client.
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	return b
}

// protoJSONs is a list of API objects for --output json.
func protoJSONs[M proto.Message](ms []M) []json.RawMessage {
	out := make([]json.RawMessage, len(ms))
	for i, m := range ms {
		out[i] = protoJSON(m)
	}
	return out
}

// word is an enum value as a table shows it: its name without the enum's
// prefix, lower case ("APPROVAL_STATE_PENDING" is "pending"); "-" for
// unspecified.
func word(e protoreflect.Enum) string {
	if e.Number() == 0 {
		return "-"
	}
	d := e.Descriptor().Values().ByNumber(e.Number())
	if d == nil { // a value newer than this client
		return strconv.Itoa(int(e.Number()))
	}
	zero := string(e.Descriptor().Values().ByNumber(0).Name())
	prefix := strings.TrimSuffix(zero, "UNSPECIFIED")
	return strings.ToLower(strings.TrimPrefix(string(d.Name()), prefix))
}

// when is a time as tables show it: RFC 3339 in UTC, to the second; "-"
// when absent.
func when(ts *timestamppb.Timestamp) string {
	if ts == nil {
		return "-"
	}
	return ts.AsTime().UTC().Truncate(time.Second).Format(time.RFC3339)
}

// span is a duration as tables show it; "-" when absent.
func span(d *durationpb.Duration) string {
	if d == nil {
		return "-"
	}
	return d.AsDuration().String()
}

// dash is s, or "-" when empty, so a table's columns stay aligned.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// list is names for a table cell: comma-separated; "-" for none.
func list(names []string) string {
	return dash(strings.Join(names, ","))
}

// clip is s on one line and at most n characters, for a table cell.
func clip(s string, n int) string {
	s = sanitize(strings.Join(strings.Fields(s), " "), false)
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return dash(s)
}

// sanitize is s safe to print on a terminal: control characters (but the
// newlines of a multi-line text) and the characters that reorder text
// (bidirectional controls) become U+FFFD, so what an agent wrote cannot
// move the cursor, recolour the screen or fake a prompt; a tab is a space.
func sanitize(s string, multiline bool) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' && multiline:
			return r
		case r == '\t':
			return ' '
		case unicode.IsControl(r), unicode.Is(unicode.Bidi_Control, r):
			return unicode.ReplacementChar
		}
		return r
	}, s)
}
