package agentflow

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// dump writes the tree, one node or field a line, indented by depth;
// withPos adds every node's span. Two trees that differ only in positions
// dump the same without them.
func dump(n any, withPos bool) string {
	var b strings.Builder
	dumpValue(&b, reflect.ValueOf(n), 0, withPos)
	return b.String()
}

var spanType = reflect.TypeOf(Span{})

func dumpValue(b *strings.Builder, v reflect.Value, depth int, withPos bool) {
	indent := strings.Repeat("  ", depth)
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			b.WriteString("nil\n")
			return
		}
		dumpValue(b, v.Elem(), depth, withPos)
	case reflect.Struct:
		b.WriteString(v.Type().Name())
		if id, ok := v.Interface().(Ident); ok {
			b.WriteString(" " + strconv.Quote(id.Name))
			if withPos {
				fmt.Fprintf(b, " %s-%s [%d,%d)", id.From, id.To, id.From.Offset, id.To.Offset)
			}
			b.WriteString("\n")
			return
		}
		if withPos {
			s := v.FieldByName("Span").Interface().(Span)
			fmt.Fprintf(b, " %s-%s [%d,%d)", s.From, s.To, s.From.Offset, s.To.Offset)
		}
		b.WriteString("\n")
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if f.Type == spanType {
				continue
			}
			if f.Name == "OpPos" {
				if withPos {
					fmt.Fprintf(b, "%s  OpPos: %s\n", indent, v.Field(i).Interface())
				}
				continue
			}
			fmt.Fprintf(b, "%s  %s: ", indent, f.Name)
			dumpValue(b, v.Field(i), depth+1, withPos)
		}
	case reflect.Slice:
		if v.IsNil() {
			b.WriteString("nil\n")
			return
		}
		fmt.Fprintf(b, "[%d]\n", v.Len())
		for i := 0; i < v.Len(); i++ {
			fmt.Fprintf(b, "%s  - ", indent)
			dumpValue(b, v.Index(i), depth+1, withPos)
		}
	case reflect.String:
		b.WriteString(strconv.Quote(v.String()) + "\n")
	default:
		fmt.Fprintf(b, "%v\n", v.Interface())
	}
}
