package lineedit

import "testing"

func TestCompleter(t *testing.T) {
	candidates := map[string][]string{
		"f:uni":   {"uniqfile"},
		"f:fi":    {"file one.txt"},
		"f:sub":   {"subdir/"},
		"f:ab":    {"abc1", "abc2"},
		"f:x":     {"xa", "xb"},
		"c:ech":   {"echo"},
		"f:é":     {"éa", "éb"},
		"f:caf":   {"café1", "cafë2"},
		"f:nomat": nil,
	}
	var asked []string
	c := completer(func(word string, command bool) []string {
		key := "f:" + word
		if command {
			key = "c:" + word
		}
		asked = append(asked, key)
		return candidates[key]
	})
	for _, tc := range []struct {
		line string
		pos  int
		want string // "" for no change
	}{
		{"ls uni", 6, "ls uniqfile "},
		{"ls fi", 5, `ls file\ one.txt `},
		{"ls sub", 6, "ls subdir/"},
		{"ls ab", 5, "ls abc"},
		{"ls x", 4, ""}, // nothing shared beyond the word
		{"ech", 3, "echo "},
		{"true; ech", 9, "true; echo "},
		{"a | ech", 7, "a | echo "},
		{"ls nomat", 8, ""},
		{"ls uni more", 6, "ls uniqfile  more"},
		{"ls é", len("ls é"), ""},
		{"ls caf", 6, ""}, // café1, cafë2: a character is never cut in two
		// quotes and expansions are left alone
		{"ls $HO", 6, ""},
		{`ls a\ b`, 7, ""},
	} {
		asked = nil
		got, pos, ok := c.complete(tc.line, tc.pos)
		if !ok {
			got = ""
		}
		if got != tc.want {
			t.Errorf("complete(%q, %d) = %q (asked %q), want %q", tc.line, tc.pos, got, asked, tc.want)
		}
		if ok && pos != len(got)-len(tc.line[tc.pos:]) {
			t.Errorf("complete(%q, %d): cursor at %d", tc.line, tc.pos, pos)
		}
	}
}
