package policy

import (
	"strings"
	"testing"
)

// TestLockKey: capabilities.json's "lock" key (SPEC 2.3, 15). Only "required" is known; any
// other value is a problem naming the key and is read as required, so that a typo never turns
// the lock off; the providers stand.
func TestLockKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, lock string // "" leaves the key out
		required   bool
		msg        string // "" for no problem
	}{
		{"absent", "", false, ""},
		{"required", `"required"`, true, ""},
		{"another word", `"optional"`, true, `must be "required", not "optional"`},
		{"a boolean", `true`, true, "must be a string"},
		{"null", `null`, true, "must be a string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newRegFixture(t)
			caps := `{"providers": [{"id": "p", "command": ["@T@/bin/fake-mcp"], "scope": "global"}]`
			if tc.lock != "" {
				caps += `, "lock": ` + tc.lock
			}
			reg, err := f.load(t, noProjects, caps+`}`)
			if err != nil {
				t.Fatal(err)
			}
			if len(reg.Providers) != 1 || reg.LockRequired != tc.required {
				t.Errorf("providers %v, LockRequired %v; want the provider and %v", ids(reg.Providers), reg.LockRequired, tc.required)
			}
			switch {
			case tc.msg == "" && len(reg.Problems) != 0:
				t.Errorf("problems %v", reg.Problems)
			case tc.msg != "" && (len(reg.Problems) != 1 || reg.Problems[0].Key != "lock" || !strings.Contains(reg.Problems[0].Msg, tc.msg)):
				t.Errorf("problems %v, want one of key lock with %q", reg.Problems, tc.msg)
			}
		})
	}
}
