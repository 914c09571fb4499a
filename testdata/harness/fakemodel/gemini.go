package fakemodel

import (
	"encoding/json"
	"net/http"
	"strings"
)

// The Gemini API as Gemini CLI calls it (GOOGLE_GEMINI_BASE_URL): its shell tool is
// run_shell_command, whose result comes back as a functionResponse part.
const geminiShellTool = "run_shell_command"

type geminiRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			FunctionResponse *struct {
				ID       string          `json:"id"`
				Name     string          `json:"name"`
				Response json.RawMessage `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	GenerationConfig struct {
		ResponseMimeType   string         `json:"responseMimeType"`
		ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
		ResponseSchema     map[string]any `json:"responseSchema"`
	} `json:"generationConfig"`
	Tools []struct {
		FunctionDeclarations []namedTool `json:"functionDeclarations"`
	} `json:"tools"`
}

func (m *Model) gemini(w http.ResponseWriter, r *http.Request, body []byte) {
	var req geminiRequest
	if !decode(w, "gemini", body, &req) {
		return
	}
	hasShell := false
	for _, t := range req.Tools {
		hasShell = hasShell || offers(t.FunctionDeclarations, geminiShellTool)
	}
	answered := 0
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse == nil || stepOf(p.FunctionResponse.ID) < 0 {
				continue
			}
			answered++
			m.record("gemini", p.FunctionResponse.ID, geminiText(p.FunctionResponse.Response), geminiIsError(p.FunctionResponse.Response))
		}
	}
	var part map[string]any
	if call, ok := m.next(answered, hasShell); ok {
		name, args := geminiShellTool, any(map[string]any{"command": call.Command, "description": "scripted step"})
		if call.Tool != "" {
			// Gemini CLI names an MCP tool to the model mcp_<server>_<tool>.
			name, args = "mcp_"+m.server()+"_"+call.Tool, call.args()
		}
		part = map[string]any{"functionCall": map[string]any{"id": callID("call", answered), "name": name, "args": args}}
	} else if gc := req.GenerationConfig; gc.ResponseMimeType == "application/json" {
		// Routing classifiers and checkers ask for JSON: give them a valid value at once rather
		// than text they retry with backoff.
		schema := gc.ResponseJSONSchema
		if schema == nil {
			schema = gc.ResponseSchema
		}
		text, _ := json.Marshal(schemaValue(schema))
		part = map[string]any{"text": string(text)}
	} else {
		part = map[string]any{"text": "done"}
	}
	chunk := map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": []any{part}}}},
		"usageMetadata": map[string]int{"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
		"modelVersion":  "fake",
	}
	if !strings.Contains(r.URL.Path, ":streamGenerateContent") {
		writeJSON(w, chunk)
		return
	}
	startSSE(w)
	sse(w, "", chunk)
}

// geminiText is the functionResponse's output (or error) text, else its JSON.
func geminiText(raw json.RawMessage) string {
	var resp map[string]any
	json.Unmarshal(raw, &resp)
	for _, k := range []string{"output", "error"} {
		if s, ok := resp[k].(string); ok {
			return s
		}
	}
	return string(raw)
}

// schemaValue is a small value valid for a Gemini response schema (OpenAPI subset; types in
// either case): the first enum value, required properties only, empty arrays.
func schemaValue(schema map[string]any) any {
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	typ, _ := schema["type"].(string)
	switch strings.ToLower(typ) {
	case "object":
		obj := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		required, _ := schema["required"].([]any)
		for _, r := range required {
			name, _ := r.(string)
			sub, _ := props[name].(map[string]any)
			obj[name] = schemaValue(sub)
		}
		return obj
	case "array":
		return []any{}
	case "integer", "number":
		if min, ok := schema["minimum"].(float64); ok {
			return min
		}
		return 1
	case "boolean":
		return false
	default:
		return "fake"
	}
}

// geminiIsError says whether a functionResponse carries an error rather than an output (as Gemini
// CLI hands back an MCP tool's isError result).
func geminiIsError(raw json.RawMessage) bool {
	var resp map[string]any
	json.Unmarshal(raw, &resp)
	_, isErr := resp["error"].(string)
	_, out := resp["output"].(string)
	return isErr && !out
}
