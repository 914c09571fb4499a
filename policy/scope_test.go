package policy

import (
	"reflect"
	"strings"
	"testing"
)

var scopeTests = []struct {
	in   string
	want Scope
	err  string // substring of the error; "" means valid
}{
	{"global", Scope{Kind: "global"}, ""},
	{"corpus fw-a", Scope{Kind: "corpus", Names: []string{"fw-a"}}, ""},
	{"corpus fw-a, fw-b", Scope{Kind: "corpus", Names: []string{"fw-a", "fw-b"}}, ""},
	{"corpus fw-a,fw-b", Scope{Kind: "corpus", Names: []string{"fw-a", "fw-b"}}, ""},
	{"corpus  fw-a ,\tfw_b ,  c9", Scope{Kind: "corpus", Names: []string{"fw-a", "fw_b", "c9"}}, ""},
	{"corpus\tfw-a", Scope{Kind: "corpus", Names: []string{"fw-a"}}, ""},
	{"family firmware", Scope{Kind: "family", Names: []string{"firmware"}}, ""},
	{"family x,y", Scope{Kind: "family", Names: []string{"x", "y"}}, ""},
	{"path /src/fw-a", Scope{Kind: "path", Path: "/src/fw-a"}, ""},
	{"path /src/my dir", Scope{Kind: "path", Path: "/src/my dir"}, ""},
	{"path /", Scope{Kind: "path", Path: "/"}, ""},

	{"", Scope{}, "must not be empty"},
	{"Global", Scope{}, "must be global"},
	{"GLOBAL", Scope{}, "must be global"},
	{"global fw-a", Scope{}, "global takes no operand"},
	{" global", Scope{}, "blanks"},
	{"global ", Scope{}, "blanks"},
	{"corpus fw-a ", Scope{}, "blanks"},
	{"Corpus fw-a", Scope{}, "must be global"},
	{"corpus", Scope{}, "at least one name"},
	{"corpus ", Scope{}, "blanks"},
	{"corpus fw-a,", Scope{}, "empty name"},
	{"corpus ,fw-a", Scope{}, "empty name"},
	{"corpus fw-a,,fw-b", Scope{}, "empty name"},
	{"corpus FW-A", Scope{}, `name "FW-A"`},
	{"corpus 9fw", Scope{}, `name "9fw"`},
	{"corpus fw a", Scope{}, `name "fw a"`},
	{"corpus fw-a; fw-b", Scope{}, `name "fw-a; fw-b"`},
	{"corpus fw-a, fw-a", Scope{}, "duplicate name"},
	{"family", Scope{}, "at least one name"},
	{"family Firmware", Scope{}, "must match"},
	{"path", Scope{}, "path: must be an absolute directory"},
	{"path src/fw-a", Scope{}, "absolute"},
	{"path ~/src", Scope{}, "absolute"},
	{"path $HOME/src", Scope{}, "absolute"},
	{"path /a\x00b", Scope{}, "NUL"},
	{"paths /a", Scope{}, "must be global"},
	{"project fw-a", Scope{}, "must be global"},
	{"corpus:fw-a", Scope{}, "must be global"},
}

func TestParseScope(t *testing.T) {
	t.Parallel()
	for _, tt := range scopeTests {
		got, err := ParseScope(tt.in)
		if tt.err == "" {
			if err != nil {
				t.Errorf("ParseScope(%q) = error %v", tt.in, err)
			} else if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseScope(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("ParseScope(%q) = %#v, %v; want error containing %q", tt.in, got, err, tt.err)
		}
	}
}

func TestScopeString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   Scope
		want string
	}{
		{Scope{}, "none"},
		{Scope{Kind: "global"}, "global"},
		{Scope{Kind: "corpus", Names: []string{"a", "b"}}, "corpus a, b"},
		{Scope{Kind: "family", Names: []string{"x"}}, "family x"},
		{Scope{Kind: "path", Path: "/d"}, "path /d"},
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.in, got, tt.want)
		}
		// Every rendering of a real scope parses back to itself.
		if tt.in.Kind != "" {
			back, err := ParseScope(tt.in.String())
			if err != nil || !reflect.DeepEqual(back, tt.in) {
				t.Errorf("ParseScope(%q) = %#v, %v; want %#v", tt.in.String(), back, err, tt.in)
			}
		}
	}
}
