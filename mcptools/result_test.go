package mcptools

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestValueOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		want any
	}{
		{
			name: "structured content wins over text",
			res: &mcp.CallToolResult{
				StructuredContent: map[string]any{"status": "delivered"},
				Content:           []mcp.Content{&mcp.TextContent{Text: `{"status":"something else"}`}},
			},
			want: map[string]any{"status": "delivered"},
		},
		{
			name: "one text that is JSON",
			res:  &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: ` {"n": 5, "ok": true} `}}},
			want: map[string]any{"n": 5.0, "ok": true},
		},
		{
			name: "one text that is a JSON number",
			res:  &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "42"}}},
			want: 42.0,
		},
		{
			name: "one text that is not JSON",
			res:  &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Order A-1001 is on its way."}}},
			want: "Order A-1001 is on its way.",
		},
		{
			name: "several contents",
			res: &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "two orders"},
				&mcp.TextContent{Text: `["A-1001","A-1002"]`},
				&mcp.ImageContent{Data: []byte("png"), MIMEType: "image/png"},
			}},
			want: []any{
				"two orders",
				[]any{"A-1001", "A-1002"},
				map[string]any{"type": "image", "mimeType": "image/png", "data": "cG5n"},
			},
		},
		{
			name: "nothing",
			res:  &mcp.CallToolResult{},
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, valueOf(tt.res)); diff != "" {
				t.Errorf("valueOf mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		want string
	}{
		{"one text", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "order A-1003 is already refunded"}}},
			"order A-1003 is already refunded"},
		{"two texts", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}},
			"a\nb"},
		{"silent", &mcp.CallToolResult{IsError: true}, "the tool reported an error and said nothing more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := errorText(tt.res); got != tt.want {
				t.Errorf("errorText = %q, want %q", got, tt.want)
			}
		})
	}
}
