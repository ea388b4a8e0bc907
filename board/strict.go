package board

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connecthttp"
	"connectrpc.com/connect/v2/connectproto"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
)

// The board refuses what it does not know in an RPC request, rather than
// read the request without it (docs/api-policy.md): a client written for
// another version of the API whose filter the board would drop, or whose
// word for a value is now an enum, is told so, naming the field, and never
// answered as if it had asked for something else. The link is not held to
// this: an agent newer than the board may send kinds the board ignores.

// strictProcedure reports whether the RPC procedure decodes its requests
// strictly: every procedure of the board's own API but the link.
func strictProcedure(procedure string) bool {
	return strings.HasPrefix(procedure, "/symphonix.board.v1.") &&
		procedure != boardv1connect.AgentLinkServiceLinkProcedure
}

// strictCodecs are the codecs of the procedures strictProcedure names:
// binary protobuf (whose unknown fields strictStream refuses) and JSON that
// refuses a field, or an enum's value, it does not know.
func strictCodecs() connecthttp.Option {
	json := connectproto.NewJSONCodec()
	json.UnmarshalOptions.DiscardUnknown = false
	codecs := connecthttp.WithCodecs(connectproto.NewBinaryCodec(), strictJSON{json})
	return connecthttp.WithConditionalOptions(func(spec connect.Spec) []connecthttp.Option {
		if strictProcedure(spec.Procedure) {
			return []connecthttp.Option{codecs}
		}
		return nil
	})
}

// strictJSON is the JSON codec of strict procedures: what protojson
// refuses is refused with the field named (decodeError).
type strictJSON struct {
	*connectproto.JSONCodec
}

func (c strictJSON) UnmarshalRead(ctx context.Context, src io.Reader, msg any) error {
	data, err := io.ReadAll(src)
	if err != nil {
		return err
	}
	err = c.JSONCodec.UnmarshalRead(ctx, bytes.NewReader(data), msg)
	if err == nil {
		return nil
	}
	m, ok := msg.(interface{ ProtoReflect() protoreflect.Message })
	if !ok {
		return err
	}
	md := m.ProtoReflect().Descriptor()
	if why := jsonRefusal(md, data, ""); why != "" {
		return &decodeError{msg: why}
	}
	// Not something the walk recognises (not JSON at all, a number where a
	// string belongs): protojson's own words, which name the field.
	return &decodeError{msg: fmt.Sprintf("%s: %v", md.Name(), err)}
}

// decodeError is a request refused as it was decoded; its message names
// the field at fault.
type decodeError struct{ msg string }

func (e *decodeError) Error() string { return e.msg }

// jsonRefusal is why protojson refused data as a message md, naming the
// field (path is its parent's, "rule." or ""), when the reason is one an
// old client gives: a field this board does not know, or a word where the
// field is now an enum. "" when it is neither.
func jsonRefusal(md protoreflect.MessageDescriptor, data []byte, path string) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return ""
	}
	for _, key := range slices.Sorted(maps.Keys(obj)) {
		raw := obj[key]
		fd := md.Fields().ByJSONName(key)
		if fd == nil {
			fd = md.Fields().ByTextName(key)
		}
		if fd == nil {
			return fmt.Sprintf("%s: unknown field %s: this board does not know it", md.Name(), quoted(key))
		}
		name := path + string(fd.Name())
		switch {
		case fd.IsList() || fd.IsMap():
			// Lists and maps of enums or messages: protojson's words.
		case fd.Enum() != nil:
			var word string
			if json.Unmarshal(raw, &word) == nil && fd.Enum().Values().ByName(protoreflect.Name(word)) == nil {
				return fmt.Sprintf("%s: wrong value %s (this field is %s since API v1)", name, quoted(word), article(string(fd.Enum().Name())))
			}
		case fd.Message() != nil && !strings.HasPrefix(string(fd.Message().FullName()), "google.protobuf."):
			if why := jsonRefusal(fd.Message(), raw, name+"."); why != "" {
				return why
			}
		}
	}
	return ""
}

// unknownFields is why m, a request decoded from binary protobuf, is
// refused: the first field in it, or in any message in it, that this board
// does not know. A field the message declares with another type (an old
// client's word where the field is now an enum) is named; a number the
// message does not declare, or reserves, is named by its message. ""
// when there is none.
func unknownFields(m protoreflect.Message, path string) string {
	md := m.Descriptor()
	if raw := m.GetUnknown(); len(raw) > 0 {
		// The first is enough to refuse the request.
		num, _, n := protowire.ConsumeTag(raw)
		if n < 0 {
			return fmt.Sprintf("%s: malformed", md.Name())
		}
		fd := md.Fields().ByNumber(num)
		switch {
		case fd == nil:
			return fmt.Sprintf("%s: unknown field %d: this board does not know it", md.Name(), num)
		case fd.Enum() != nil:
			return fmt.Sprintf("%s%s: wrong type (this field is %s since API v1)", path, fd.Name(), article(string(fd.Enum().Name())))
		default:
			return fmt.Sprintf("%s%s: wrong type (this field is %s)", path, fd.Name(), article(typeName(fd)))
		}
	}
	why := ""
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Message() == nil {
			return true
		}
		name := path + string(fd.Name())
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && why == ""; i++ {
				why = unknownFields(l.Get(i).Message(), fmt.Sprintf("%s[%d].", name, i))
			}
		case fd.IsMap():
			if fd.MapValue().Message() == nil {
				return true
			}
			v.Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
				why = unknownFields(v.Message(), fmt.Sprintf("%s[%s].", name, k.String()))
				return why == ""
			})
		default:
			why = unknownFields(v.Message(), name+".")
		}
		return why == ""
	})
	return why
}

// typeName is what a field holds, for a refusal.
func typeName(fd protoreflect.FieldDescriptor) string {
	if fd.Message() != nil {
		return string(fd.Message().Name())
	}
	return fd.Kind().String()
}

// article is name with "a" or "an" before it.
func article(name string) string {
	if name != "" && strings.ContainsRune("AEIOUaeiou", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}

// strictStream is the stream of a strict procedure: a request the codec
// refused, or one holding a field the board does not know, is
// invalid_argument naming it.
type strictStream struct {
	connect.ServerStream
}

func (s strictStream) Receive(msg any) error {
	err := s.ServerStream.Receive(msg)
	var de *decodeError
	if errors.As(err, &de) {
		return connect.NewError(connect.CodeInvalidArgument, de.msg)
	}
	if err != nil {
		return err
	}
	if m, ok := msg.(interface{ ProtoReflect() protoreflect.Message }); ok {
		if why := unknownFields(m.ProtoReflect(), ""); why != "" {
			return connect.NewError(connect.CodeInvalidArgument, why)
		}
	}
	return nil
}
