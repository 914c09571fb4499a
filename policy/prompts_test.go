package policy

import (
	"reflect"
	"strings"
	"testing"
)

// TestPromptsKey: capabilities.json's "prompts" key (SPEC 2.3, 13). A bad value leaves every
// prompt directory out with one problem naming the key; the providers stand.
func TestPromptsKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		prompts string // the value of "prompts"; "" leaves the key out
		dirs    []string
		key     string // the problem's key; "-" for no problem
		msg     string
	}{
		{"absent", "", nil, "-", ""},
		{"good paths", `{"paths": ["/srv/prompts", "/opt/more prompts"]}`, []string{"/srv/prompts", "/opt/more prompts"}, "-", ""},
		{"empty paths", `{"paths": []}`, nil, "-", ""},
		{"no paths key", `{}`, nil, "-", ""},
		{"relative path", `{"paths": ["/srv/prompts", "prompts"]}`, nil, "paths", "absolute"},
		{"unclean path", `{"paths": ["/srv/../prompts"]}`, nil, "paths", "clean"},
		{"not a string", `{"paths": [3]}`, nil, "paths", "absolute"},
		{"not an array", `{"paths": "/srv/prompts"}`, nil, "paths", "array"},
		{"paths null", `{"paths": null}`, nil, "paths", "array"},
		{"not an object", `["/srv/prompts"]`, nil, "", "object"},
		{"unknown key", `{"paths": ["/srv/prompts"], "dirs": ["/x"]}`, nil, "dirs", "unknown key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newRegFixture(t)
			caps := `{"providers": [{"id": "p", "command": ["@T@/bin/fake-mcp"], "scope": "global"}]`
			if tc.prompts != "" {
				caps += `, "prompts": ` + tc.prompts
			}
			caps += `}`
			reg, err := f.load(t, noProjects, caps)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(reg.Providers); !reflect.DeepEqual(got, []string{"p"}) || len(reg.Rejected) != 0 {
				t.Errorf("providers %v, rejected %v: the providers must stand", got, reg.Rejected)
			}
			if !reflect.DeepEqual(reg.PromptDirs, tc.dirs) {
				t.Errorf("PromptDirs %q, want %q", reg.PromptDirs, tc.dirs)
			}
			if tc.key == "-" {
				if len(reg.Problems) != 0 {
					t.Errorf("problems %v", reg.Problems)
				}
				return
			}
			if len(reg.Problems) != 1 {
				t.Fatalf("problems %v, want one", reg.Problems)
			}
			p := reg.Problems[0]
			if p.Entry != "prompts" || p.Key != tc.key || !strings.Contains(p.Msg, tc.msg) {
				t.Errorf("problem %+v (%v), want entry prompts, key %q, message with %q", *p, p, tc.key, tc.msg)
			}
		})
	}
}
