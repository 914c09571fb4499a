package capability

import (
	"encoding/json"
	"testing"

	"github.com/spear-shell/spear-shell/mcpstdio"
)

// structuredContent is shown unless a text item already holds the same JSON value (SPEC 5).
func TestRenderStructured(t *testing.T) {
	t.Parallel()
	text := func(s string) mcpstdio.Content { return mcpstdio.Content{Type: "text", Text: s} }
	cases := []struct {
		name       string
		content    []mcpstdio.Content
		structured string
		want       string
	}{
		{"only structured", nil, `{"n": 1}`, "{\"n\":1}\n"},
		{"a summary text does not hide it (go-sdk memory's read_graph)", []mcpstdio.Content{text("Graph read successfully")},
			`{"entities":[{"name":"a"}],"relations":[]}`, "Graph read successfully\n{\"entities\":[{\"name\":\"a\"}],\"relations\":[]}\n"},
		{"the same JSON in a text item", []mcpstdio.Content{text("{\n  \"n\": 1.0,\n  \"s\": \"x\"\n}")}, `{"s":"x","n":1}`,
			"{\n  \"n\": 1.0,\n  \"s\": \"x\"\n}\n"},
		{"the same JSON in a later text item", []mcpstdio.Content{text("done"), text(`{"n":1}`)}, `{"n":1}`, "done\n{\"n\":1}\n"},
		{"other JSON in the text", []mcpstdio.Content{text(`{"n":2}`)}, `{"n":1}`, "{\"n\":2}\n{\"n\":1}\n"},
		{"numbers compared exactly", []mcpstdio.Content{text(`{"n":0.10000000000000000001}`)}, `{"n":0.1}`,
			"{\"n\":0.10000000000000000001}\n{\"n\":0.1}\n"},
		{"an image is not text", []mcpstdio.Content{{Type: "image", MimeType: "image/png", Raw: json.RawMessage(`{"data":"aGk="}`)}},
			`{"n":1}`, "[image content: image/png, 4 bytes of base64 data, not shown]\n{\"n\":1}\n"},
		{"cleaned", nil, "{\"s\":\"a\u202eb\u009b31m\"}", "{\"s\":\"ab\"}\n"},
		{"no structured content", []mcpstdio.Content{text("hi")}, "", "hi\n"},
	}
	for _, c := range cases {
		res := &mcpstdio.CallResult{Content: c.content}
		if c.structured != "" {
			res.StructuredContent = json.RawMessage(c.structured)
		}
		if got := renderContent(res); got != c.want {
			t.Errorf("%s:\ngot  %q\nwant %q", c.name, got, c.want)
		}
	}
}
