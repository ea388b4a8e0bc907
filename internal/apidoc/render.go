package main

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
)

// Package is the protobuf package the reference describes.
const Package = "symphonix.board.v1"

// accessFunc says what a procedure asks of its caller: board.AccessOf.
type accessFunc func(procedure string) (board.Access, bool)

var boardAccess accessFunc = board.AccessOf

// render writes the reference of package pkg from image, a buf image (or a
// FileDescriptorSet) with source info, asking access who may call each
// method. A method the board's table does not name is an error: the board
// refuses it to everybody, which is never what a method of the API is for.
func render(image []byte, pkg protoreflect.FullName, access accessFunc) ([]byte, error) {
	var set descriptorpb.FileDescriptorSet
	if err := (proto.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(image, &set); err != nil {
		return nil, fmt.Errorf("read image: %w", err)
	}
	reg, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, fmt.Errorf("read image: %w", err)
	}
	var files []protoreflect.FileDescriptor
	reg.RangeFilesByPackage(pkg, func(fd protoreflect.FileDescriptor) bool {
		files = append(files, fd)
		return true
	})
	if len(files) == 0 {
		return nil, fmt.Errorf("the image holds no file of package %s", pkg)
	}
	slices.SortFunc(files, func(a, b protoreflect.FileDescriptor) int { return strings.Compare(a.Path(), b.Path()) })
	w := &writer{pkg: pkg, access: access, wkt: map[protoreflect.FullName]bool{}}
	if err := w.all(files); err != nil {
		return nil, err
	}
	return w.buf.Bytes(), nil
}

type writer struct {
	buf    bytes.Buffer
	pkg    protoreflect.FullName
	access accessFunc
	wkt    map[protoreflect.FullName]bool // types of other packages named
}

func (w *writer) p(format string, a ...any) {
	fmt.Fprintf(&w.buf, format, a...)
	w.buf.WriteByte('\n')
}

func (w *writer) all(files []protoreflect.FileDescriptor) error {
	var (
		services []protoreflect.ServiceDescriptor
		messages []protoreflect.MessageDescriptor
		enums    []protoreflect.EnumDescriptor
	)
	for _, fd := range files {
		for i := range fd.Services().Len() {
			services = append(services, fd.Services().Get(i))
		}
		for i := range fd.Enums().Len() {
			enums = append(enums, fd.Enums().Get(i))
		}
		var walk func(ms protoreflect.MessageDescriptors)
		walk = func(ms protoreflect.MessageDescriptors) {
			for i := range ms.Len() {
				md := ms.Get(i)
				if md.IsMapEntry() {
					continue
				}
				messages = append(messages, md)
				for j := range md.Enums().Len() {
					enums = append(enums, md.Enums().Get(j))
				}
				walk(md.Messages())
			}
		}
		walk(fd.Messages())
	}

	w.p("# API reference")
	w.p("")
	w.p("<!-- Written by go generate ./... (internal/apidoc) from proto/ and the board's policy table; do not edit. -->")
	w.p("")
	w.p("`%s` is API v1 ([compatibility.md](compatibility.md)): every service and method, then every", w.pkg)
	w.p("message and enum, with the comments of the files under `proto/`. A method is called at")
	w.p("`/%s.SERVICE/METHOD` with the Connect, gRPC or gRPC-Web protocol, over HTTP/2 or (Connect,", w.pkg)
	w.p("gRPC-Web) HTTP/1.1, with `Authorization: Bearer TOKEN` or, from a browser, the session cookie and its")
	w.p("`X-CSRF-Token` header ([people.md](people.md)). In JSON a field is named as the json column says")
	w.p("(lowerCamelCase; the snake_case name is read too), and an enum value by its name, as a string. A")
	w.p("request with a field or an enum value the board does not know is refused with `invalid_argument`")
	w.p("naming it ([api-policy.md](api-policy.md)); the link ignores what it does not know.")
	w.p("")
	w.p("**Who may call** a method is read from the board's own policy table (`board.AccessOf`), the one it")
	w.p("enforces. The roles go up: a viewer reads, an approver also decides the approvals a rule gives to")
	w.p("approvers, an admin may do everything. **Errors** are the codes the method's comment, or the comments")
	w.p("of its request's fields, name. Any method may also answer `unauthenticated` (no valid credential),")
	w.p("`permission_denied` (a role below the method's, or a credential of the wrong kind), `unavailable` (the")
	w.p("board cannot check the credential now, is shutting down, or is too busy to hash a password: try")
	w.p("again), `resource_exhausted` (a rate or a count of [limits.md](limits.md), such as the lists one caller")
	w.p("has waiting), `deadline_exceeded` (a request body sent too slowly) and `internal`, which says nothing")
	w.p("more: the board logs why. The agent link is a protocol of its own: [link.md](link.md).")
	w.p("")
	w.p("## Services")
	w.p("")
	w.p("| service | methods |")
	w.p("|---|---|")
	for _, sd := range services {
		var names []string
		for j := range sd.Methods().Len() {
			md := sd.Methods().Get(j)
			names = append(names, fmt.Sprintf("[%s](#%s)", md.Name(), slug(string(sd.Name())+"."+string(md.Name()))))
		}
		w.p("| [%s](#%s) | %s |", sd.Name(), slug(string(sd.Name())), strings.Join(names, ", "))
	}
	for _, sd := range services {
		if err := w.service(sd); err != nil {
			return err
		}
	}

	w.p("")
	w.p("## Messages")
	w.p("")
	w.p("%s", index(messages))
	for _, md := range messages {
		w.message(md)
	}

	if len(enums) > 0 {
		w.p("")
		w.p("## Enums")
		w.p("")
		w.p("%s", index(enums))
		for _, ed := range enums {
			w.enum(ed)
		}
	}

	w.wellKnown()
	return nil
}

// index is the names of ds, linked to their sections.
func index[D protoreflect.Descriptor](ds []D) string {
	var links []string
	for _, d := range ds {
		links = append(links, fmt.Sprintf("[%s](#%s)", localName(d), slug(localName(d))))
	}
	return strings.Join(links, " · ")
}

func (w *writer) service(sd protoreflect.ServiceDescriptor) error {
	w.p("")
	w.p("### %s", sd.Name())
	w.p("")
	w.p("`%s`", sd.FullName())
	w.paragraphs(sd)
	w.p("")
	w.p("| method | request → response | stream | who may call | errors |")
	w.p("|---|---|---|---|---|")
	type method struct {
		md     protoreflect.MethodDescriptor
		access board.Access
		errs   []string
	}
	var methods []method
	for j := range sd.Methods().Len() {
		md := sd.Methods().Get(j)
		procedure := "/" + string(sd.FullName()) + "/" + string(md.Name())
		a, ok := w.access(procedure)
		if !ok {
			return fmt.Errorf("%s: not in the board's policy table (board/auth.go), so the board refuses it to everybody; give it an entry", procedure)
		}
		m := method{md: md, access: a, errs: errorCodes(md)}
		methods = append(methods, m)
		w.p("| [%s](#%s) | %s → %s | %s | %s | %s |",
			md.Name(), slug(string(sd.Name())+"."+string(md.Name())),
			w.typeLink(md.Input()), w.typeLink(md.Output()), streamKind(md), whoShort(a), codeList(m.errs))
	}
	for _, m := range methods {
		md := m.md
		w.p("")
		w.p("#### %s.%s", sd.Name(), md.Name())
		w.p("")
		in, out := w.typeLink(md.Input()), w.typeLink(md.Output())
		if md.IsStreamingClient() {
			in = "stream " + in
		}
		if md.IsStreamingServer() {
			out = "stream " + out
		}
		w.p("`/%s/%s`: %s → %s (%s).", sd.FullName(), md.Name(), in, out, streamKind(md))
		w.p("")
		w.p("- **Who may call:** %s.", whoLong(m.access))
		w.p("- **Errors:** %s.", codeList(m.errs))
		w.paragraphs(md)
	}
	return nil
}

func (w *writer) message(md protoreflect.MessageDescriptor) {
	w.p("")
	w.p("### %s", localName(md))
	w.paragraphs(md)
	if md.Fields().Len() == 0 {
		w.p("")
		w.p("No fields.")
	} else {
		for k := range md.Oneofs().Len() {
			od := md.Oneofs().Get(k)
			if od.IsSynthetic() {
				continue
			}
			var names []string
			for f := range od.Fields().Len() {
				names = append(names, "`"+string(od.Fields().Get(f).Name())+"`")
			}
			w.p("")
			w.p("%s", strings.TrimSpace(fmt.Sprintf("One of `%s`, at most one set: %s. %s", od.Name(), strings.Join(names, ", "), cell(od))))
		}
		w.p("")
		w.p("| field | # | type | json | description |")
		w.p("|---|---|---|---|---|")
		for f := range md.Fields().Len() {
			fd := md.Fields().Get(f)
			desc := cell(fd)
			if fd.ContainingOneof() != nil && !fd.ContainingOneof().IsSynthetic() {
				desc = fmt.Sprintf("(one of `%s`) %s", fd.ContainingOneof().Name(), desc)
			}
			if fd.Options().(*descriptorpb.FieldOptions).GetDeprecated() {
				desc = "**Deprecated.** " + desc
			}
			w.p("| `%s` | %d | %s | `%s` | %s |", fd.Name(), fd.Number(), w.fieldType(fd), fd.JSONName(), desc)
		}
	}
	if r := reserved(md.ReservedRanges(), md.ReservedNames()); r != "" {
		w.p("")
		w.p("Reserved, never to be used again: %s.", r)
	}
}

func (w *writer) enum(ed protoreflect.EnumDescriptor) {
	w.p("")
	w.p("### %s", localName(ed))
	w.paragraphs(ed)
	w.p("")
	w.p("| value | # | description |")
	w.p("|---|---|---|")
	for k := range ed.Values().Len() {
		v := ed.Values().Get(k)
		w.p("| `%s` | %d | %s |", v.Name(), v.Number(), cell(v))
	}
}

// wellKnown says how the types of google.protobuf the API names look in
// JSON.
func (w *writer) wellKnown() {
	if len(w.wkt) == 0 {
		return
	}
	forms := map[protoreflect.FullName]string{
		"google.protobuf.Timestamp": "an instant, in JSON an RFC 3339 string in UTC: `\"2026-12-01T09:30:15.123456789Z\"`",
		"google.protobuf.Duration":  "a span of time, in JSON seconds with an `s`: `\"1.5s\"`",
		"google.protobuf.Struct":    "a JSON object, in JSON as it is",
	}
	names := make([]protoreflect.FullName, 0, len(w.wkt))
	for n := range w.wkt {
		names = append(names, n)
	}
	slices.Sort(names)
	w.p("")
	w.p("## Types from google.protobuf")
	w.p("")
	for _, n := range names {
		form, ok := forms[n]
		if !ok {
			form = "see the protobuf documentation"
		}
		w.p("- `%s`: %s.", n, form)
	}
}

// paragraphs writes d's leading comment, a paragraph for each of its own.
func (w *writer) paragraphs(d protoreflect.Descriptor) {
	for _, para := range commentOf(d) {
		w.p("")
		w.p("%s", escape(para))
	}
}

// cell is d's comment on one line, for a table.
func cell(d protoreflect.Descriptor) string {
	return strings.ReplaceAll(escape(strings.Join(commentOf(d), " ")), "|", `\|`)
}

// commentOf is d's leading comment, as paragraphs with their lines joined.
func commentOf(d protoreflect.Descriptor) []string {
	loc := d.ParentFile().SourceLocations().ByDescriptor(d)
	var paras []string
	var cur []string
	for _, line := range strings.Split(loc.LeadingComments, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			if len(cur) > 0 {
				paras = append(paras, strings.Join(cur, " "))
				cur = nil
			}
			continue
		}
		cur = append(cur, line)
	}
	if len(cur) > 0 {
		paras = append(paras, strings.Join(cur, " "))
	}
	return paras
}

// escape makes comment text into Markdown that shows it as written: outside
// `code`, the characters Markdown would read as markup are escaped.
func escape(s string) string {
	var b strings.Builder
	inCode := false
	rs := []rune(s)
	for i, r := range rs {
		if r == '`' {
			inCode = !inCode
			b.WriteRune(r)
			continue
		}
		if inCode {
			b.WriteRune(r)
			continue
		}
		switch r {
		case '*', '\\', '<', '[', ']':
			b.WriteByte('\\')
		case '#', '>', '+', '-':
			// At the start of a paragraph: a heading, a quote, a list.
			if i == 0 {
				b.WriteByte('\\')
			}
		case '_':
			// Inside a word, as in snake_case, an underscore is no markup.
			if i == 0 || i == len(rs)-1 || !isWord(rs[i-1]) || !isWord(rs[i+1]) {
				b.WriteByte('\\')
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func (w *writer) fieldType(fd protoreflect.FieldDescriptor) string {
	if fd.IsMap() {
		return fmt.Sprintf("map&lt;%s, %s&gt;", w.valueType(fd.MapKey()), w.valueType(fd.MapValue()))
	}
	t := w.valueType(fd)
	switch {
	case fd.IsList():
		return "repeated " + t
	case fd.HasOptionalKeyword():
		return "optional " + t
	}
	return t
}

func (w *writer) valueType(fd protoreflect.FieldDescriptor) string {
	switch {
	case fd.Message() != nil:
		return w.typeLink(fd.Message())
	case fd.Enum() != nil:
		return w.typeLink(fd.Enum())
	}
	return fd.Kind().String()
}

// typeLink is d's name, linked to its section when it is of the package.
func (w *writer) typeLink(d protoreflect.Descriptor) string {
	if d.ParentFile().Package() != w.pkg {
		w.wkt[d.FullName()] = true
		return "`" + string(d.FullName()) + "`"
	}
	return fmt.Sprintf("[%s](#%s)", localName(d), slug(localName(d)))
}

// localName is d's name within the package: "Outer.Inner" for a nested one.
func localName(d protoreflect.Descriptor) string {
	return strings.TrimPrefix(string(d.FullName()), string(d.ParentFile().Package())+".")
}

// slug is the anchor GitHub gives a heading: lower case, spaces as
// hyphens, other punctuation gone.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func streamKind(md protoreflect.MethodDescriptor) string {
	switch {
	case md.IsStreamingClient() && md.IsStreamingServer():
		return "bidi stream"
	case md.IsStreamingServer():
		return "server stream"
	case md.IsStreamingClient():
		return "client stream"
	}
	return "unary"
}

// roles are the operators' roles, lowest first.
var roles = []identity.Role{identity.RoleViewer, identity.RoleApprover, identity.RoleAdmin}

// whoShort is who may call, for the services' tables.
func whoShort(a board.Access) string {
	switch {
	case a.Public:
		return "anyone, no token"
	case a.AnyKind:
		return "any token"
	case a.Kind == identity.KindAgent:
		return "agent token"
	case a.SessionOnly:
		return "signed-in person"
	}
	return a.Role.String()
}

// whoLong is who may call, in a sentence.
func whoLong(a board.Access) string {
	switch {
	case a.Public:
		return "anyone, without a credential"
	case a.AnyKind:
		return "any valid token, operator or agent"
	case a.Kind == identity.KindAgent:
		return "an agent token, for the agent it was minted for"
	}
	var allowed []string
	for _, r := range roles {
		if r >= a.Role {
			allowed = append(allowed, r.String())
		}
	}
	list := strings.Join(allowed, ", ")
	if n := len(allowed); n > 1 {
		list = strings.Join(allowed[:n-1], ", ") + " or " + allowed[n-1]
	}
	if a.SessionOnly {
		return "a person signed in on the web, with role " + list + "; never a token"
	}
	return "an operator token or a signed-in person with role " + list
}

// codes are the Connect and gRPC status codes, by number.
var codes = []string{
	"canceled", "unknown", "invalid_argument", "deadline_exceeded", "not_found", "already_exists",
	"permission_denied", "resource_exhausted", "failed_precondition", "aborted", "out_of_range",
	"unimplemented", "internal", "unavailable", "data_loss", "unauthenticated",
}

// prose are the codes that are also everyday words, which the comments use
// as such ("a code that is unknown"): they are not read as codes. Any
// method may answer internal anyway, as the reference says at its top.
var prose = []string{"canceled", "unknown", "aborted", "internal"}

var codeWord = regexp.MustCompile(`\b(` + strings.Join(slices.DeleteFunc(slices.Clone(codes), func(c string) bool {
	return slices.Contains(prose, c)
}), "|") + `)\b`)

// errorCodes are the codes md's comment, or the comments of its request's
// fields, name, in the order of their numbers.
func errorCodes(md protoreflect.MethodDescriptor) []string {
	named := map[string]bool{}
	text := strings.Join(commentOf(md), " ")
	fields := md.Input().Fields()
	for i := range fields.Len() {
		text += " " + strings.Join(commentOf(fields.Get(i)), " ")
	}
	for _, c := range codeWord.FindAllString(text, -1) {
		named[c] = true
	}
	var out []string
	for _, c := range codes {
		if named[c] {
			out = append(out, c)
		}
	}
	return out
}

func codeList(cs []string) string {
	if len(cs) == 0 {
		return "none named"
	}
	quoted := make([]string, len(cs))
	for i, c := range cs {
		quoted[i] = "`" + c + "`"
	}
	return strings.Join(quoted, ", ")
}

// reserved says a message's reserved numbers and names.
func reserved(ranges protoreflect.FieldRanges, names protoreflect.Names) string {
	var parts []string
	for i := range ranges.Len() {
		r := ranges.Get(i) // [start, end)
		if r[1]-r[0] == 1 {
			parts = append(parts, fmt.Sprintf("%d", r[0]))
		} else {
			parts = append(parts, fmt.Sprintf("%d to %d", r[0], r[1]-1))
		}
	}
	var out []string
	if len(parts) > 0 {
		out = append(out, "numbers "+strings.Join(parts, ", "))
	}
	var ns []string
	for i := range names.Len() {
		ns = append(ns, "`"+string(names.Get(i))+"`")
	}
	if len(ns) > 0 {
		out = append(out, "names "+strings.Join(ns, ", "))
	}
	return strings.Join(out, "; ")
}
