package board

import (
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// Bounds on what an approval shows, beyond its size (maxShowLen): a person
// reads it on a card, and every API client must be able to decode it as a
// google.protobuf.Struct. Each level of JSON nesting is two or three levels
// of protobuf messages, and protobuf decoders refuse messages nested past a
// limit (100 in Python, 10,000 in Go): one approval nested past it would
// make every list and watch that carries it fail for those clients.
const (
	// maxShowDepth is how many objects and arrays may lie within one
	// another, the outermost object included.
	maxShowDepth = 16
	// maxShowValues is how many keys and values a shown object may hold,
	// at every level together.
	maxShowValues = 10000
)

// validShow checks what is shown: a JSON object, at most maxShowLen bytes,
// maxShowDepth deep and maxShowValues keys and values.
func validShow(show string) error {
	switch {
	case show == "":
		return fmt.Errorf("required: a JSON object")
	case len(show) > maxShowLen:
		return fmt.Errorf("%d bytes, at most %d", len(show), maxShowLen)
	case !json.Valid([]byte(show)):
		return fmt.Errorf("not valid JSON")
	}
	if t := strings.TrimLeft(show, " \t\r\n"); !strings.HasPrefix(t, "{") {
		return fmt.Errorf("must be a JSON object")
	}
	if err := showShape(show); err != nil {
		return err
	}
	if err := protojson.Unmarshal([]byte(show), &structpb.Struct{}); err != nil {
		return fmt.Errorf("not a JSON object the board can show: %v", err)
	}
	return nil
}

// showShape checks the nesting and the number of keys and values of a
// valid JSON text, in one pass that allocates nothing, so that it is cheap
// enough to run on every approval the board sends (showStruct).
func showShape(s string) error {
	depth, values := 0, 0
	inString, escaped := false, false
	var prev byte // the last byte outside strings and white space
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '"':
			inString = true
			values++
		case '{', '[':
			depth++
			values++
			if depth > maxShowDepth {
				return fmt.Errorf("nested more than %d deep (objects and arrays within one another)", maxShowDepth)
			}
		case '}', ']':
			depth--
		case ':', ',':
		default:
			// The first byte of a number, true, false or null.
			if prev == ':' || prev == ',' || prev == '[' || prev == 0 {
				values++
			}
		}
		if values > maxShowValues {
			return fmt.Errorf("more than %d keys and values", maxShowValues)
		}
		prev = c
	}
	return nil
}

// showStruct is show as a Struct, or nil when it is not one a client can
// decode: an approval raised before the board bounded what is shown keeps
// its show_json, and loses only the Struct.
func showStruct(show string) *structpb.Struct {
	if showShape(show) != nil {
		return nil
	}
	st := &structpb.Struct{}
	if err := protojson.Unmarshal([]byte(show), st); err != nil {
		return nil
	}
	return st
}
