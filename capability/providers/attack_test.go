package providers

import "testing"

// attack (SPEC 12): session and turn ids chosen to collide after joining or hashing (ids that
// split the same text differently, an empty session against an empty turn, dots that a path
// join would clean) give distinct per-turn directories: no turn can reach another's ended mark
// or pins through its ids.
func TestAttackTurnKeyCollisions(t *testing.T) {
	t.Parallel()
	pairs := [][2]string{
		{"a", "bc"}, {"ab", "c"}, {"", "abc"}, {"abc", ""},
		{"a\x00", "b"}, {"a", "\x00b"}, {"1:a", "b"}, {"", "1:ab"},
		{".", "t"}, {"..", "t"}, {"", "../t"}, {"s/..", "t"},
		{"s", "t"}, {"S", "t"},
	}
	seen := map[string][2]string{}
	for _, p := range pairs {
		k := stateKey(p[0], p[1])
		if !isKey(k) {
			t.Errorf("stateKey(%q, %q) = %q: not a key", p[0], p[1], k)
		}
		if q, ok := seen[k]; ok {
			t.Errorf("session %q turn %q and session %q turn %q share the key %s", p[0], p[1], q[0], q[1], k)
		}
		seen[k] = p
	}
}
