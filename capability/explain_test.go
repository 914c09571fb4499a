package capability

import "testing"

func TestEveryCodeExplained(t *testing.T) {
	t.Parallel()
	for code := range exitCodes {
		if code == "" {
			continue
		}
		e, ok := Explain(code)
		if !ok || e.Code != code || e.Meaning == "" || e.Next == "" {
			t.Errorf("%s: %+v %v", code, e, ok)
		}
	}
	if len(explanations) != len(exitCodes)-1 {
		t.Errorf("%d explanations for %d codes", len(explanations), len(exitCodes)-1)
	}
	if _, ok := Explain("nonsense"); ok {
		t.Error("an unknown code was explained")
	}
}
