package mcpface

import "strings"

// maxDirectName bounds a direct tool's name: the terminals count their own mcp__<server>__
// prefix against a limit of 64 (SPEC 13).
const maxDirectName = 50

// DirectName is the MCP tool name of capability id (<provider>/<tool>): "/" as "__" and every
// other character outside [A-Za-z0-9_] as "_". ok is false when the name may not be a direct
// tool: over 50 characters, or starting "spear_" (the face's own tools).
func DirectName(id string) (name string, ok bool) {
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c == '/':
			b.WriteString("__")
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
			b.WriteByte(c)
		default:
			b.WriteByte('_')
		}
	}
	name = b.String()
	return name, len(name) <= maxDirectName && !strings.HasPrefix(name, "spear_")
}

// DirectNames maps each id that may be a direct tool to its name; two ids that map to one
// name are both left out (reached through spear_invoke only, never one of them cut).
func DirectNames(ids []string) map[string]string {
	byName := map[string][]string{}
	for _, id := range ids {
		if n, ok := DirectName(id); ok {
			byName[n] = append(byName[n], id)
		}
	}
	out := map[string]string{}
	for n, owners := range byName {
		if len(owners) == 1 {
			out[owners[0]] = n
		}
	}
	return out
}
