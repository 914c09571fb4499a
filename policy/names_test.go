package policy

import (
	"math/rand"
	"regexp"
	"strings"
	"testing"
)

// The hand-written name matchers agree with the regular expressions they stand for.
func TestNamePatterns(t *testing.T) {
	t.Parallel()
	alphabet := "aZz09_-.~ /é\x00A"
	rng := rand.New(rand.NewSource(1))
	fixed := []string{"", "a", "A", "_", "-", "0", "a-b_c", "abc.", strings.Repeat("a", 63), strings.Repeat("a", 64),
		strings.Repeat("x", 128), strings.Repeat("x", 129), "é", "a\n", "\na"}
	for _, p := range []namePattern{nameRe, idRe, turnRe, toolNameRe, envNameRe} {
		re := regexp.MustCompile(p.String())
		inputs := append([]string(nil), fixed...)
		for range 3000 {
			// Half the inputs use only name characters, so that many of them match.
			chars := alphabet
			if rng.Intn(2) == 0 {
				chars = "az09_-.Z"
			}
			b := make([]byte, rng.Intn(140))
			for i := range b {
				b[i] = chars[rng.Intn(len(chars))]
			}
			inputs = append(inputs, string(b))
		}
		for _, s := range inputs {
			if got, want := p.MatchString(s), re.MatchString(s); got != want {
				t.Errorf("%s on %q: %v, want %v", p, s, got, want)
			}
		}
	}
}
