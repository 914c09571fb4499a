package capability

import (
	"bytes"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// TestPinLines holds the pin file to its earlier spelling: a "<id> <hash>" line per tool,
// the lines sorted as strings (ids that are prefixes of others included).
func TestPinLines(t *testing.T) {
	names := []string{"a", "a.b", "a-b", "a_b", "a0", "A", "Z", "z", "echo", "echo2", "e", "t0001", "t0010", "-", "."}
	var tools []*tool
	for _, p := range []string{"p", "p1", "p-1", "p_", "q"} {
		for _, n := range names {
			tools = append(tools, &tool{id: p + "/" + n, hash: strings.Repeat(string(rune('a'+len(tools)%26)), 64)})
		}
	}
	rand.Shuffle(len(tools), func(i, j int) { tools[i], tools[j] = tools[j], tools[i] })
	var lines []string
	for _, tl := range tools {
		lines = append(lines, tl.id+" "+tl.hash+"\n")
	}
	sort.Strings(lines)
	if got, want := pinLines(tools), []byte(strings.Join(lines, "")); !bytes.Equal(got, want) {
		t.Errorf("pinLines:\n%s\nwant\n%s", got, want)
	}
}
