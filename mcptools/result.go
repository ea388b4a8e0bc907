package mcptools

import (
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// valueOf turns what a tool returned into the plain Go value a flow channel
// holds (map[string]any, []any, string, float64, bool or nil):
//
//   - structured content, when the tool gave any, as it is;
//   - otherwise one text block, read as JSON when it is JSON and as a string
//     when it is not;
//   - otherwise several blocks as a list, each text block read the same way
//     and any other block (an image, a resource) as its MCP JSON form;
//   - no content at all is nil.
func valueOf(res *mcp.CallToolResult) any {
	if res.StructuredContent != nil {
		return res.StructuredContent
	}
	switch len(res.Content) {
	case 0:
		return nil
	case 1:
		return contentValue(res.Content[0])
	}
	list := make([]any, len(res.Content))
	for i, c := range res.Content {
		list[i] = contentValue(c)
	}
	return list
}

func contentValue(c mcp.Content) any {
	if t, ok := c.(*mcp.TextContent); ok {
		return textValue(t.Text)
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	return v
}

func textValue(text string) any {
	if s := strings.TrimSpace(text); s != "" && json.Valid([]byte(s)) {
		var v any
		if json.Unmarshal([]byte(s), &v) == nil {
			return v
		}
	}
	return text
}

// errorText is what an error result says: its text blocks, one per line.
func errorText(res *mcp.CallToolResult) string {
	var lines []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			lines = append(lines, t.Text)
		}
	}
	if len(lines) == 0 {
		return "the tool reported an error and said nothing more"
	}
	return strings.Join(lines, "\n")
}
