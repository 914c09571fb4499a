package realshell

import "testing"

func TestDupsStdin(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"exec 3<&0", true},
		{"exec {fd}<&0; echo $fd", true},
		{"f() { exec 3<& 0; }", true},
		{"exec 3<&0-", true},
		{"cat <&0", true},
		{"fd=0; exec {v}<&$fd", true},
		{"exec 3<&${fd}", true},
		{"exec 3<&01", false},
		{"exec 3<&10", false},
		{"exec 3<&4", false},
		{"echo a && b", false},
		{"cat <<EOF", false},
		{"x <&", false},
	} {
		if got := dupsStdin(c.text); got != c.want {
			t.Errorf("dupsStdin(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}
