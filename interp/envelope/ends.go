package envelope

import "strings"

// A session asks MayBeEnvelope about every unit, and parsing the templates costs a process
// about 2 ms (Codex's 38 KB prelude): more than a thousand forwarded commands cost spear-shell
// itself. So the first test needs no parse: every input that may be an envelope with text of
// its own starts with the text before its template's first slot marker and ends with the text
// after its last, found in the template's text. A slot may be a single-quoted word, whose quote
// is the slot's own: it is left out, so these ends are never longer than the parsed template's
// (envelope_ends_test.go holds that for every template).

// envelopeEnd is the text an input starts and ends with if it may be one envelope.
type envelopeEnd struct{ head, tail string }

// terminalEnds are the ends of terminal's envelopes with text of their own.
func terminalEnds(terminal string) []envelopeEnd {
	list, _, err := readTerminal(terminal)
	if err != nil {
		return nil
	}
	var out []envelopeEnd
	for _, e := range list {
		if !e.Plain() {
			out = append(out, textEnds(e.Text))
		}
	}
	return out
}

// textEnds is the text before a template's first slot marker and after its last, without a
// single quote next to the marker. Every marker starts with markerStart and ends with "__": a
// cut at any such word is at or before the first slot and at or after the last, which only
// makes the ends shorter.
func textEnds(text string) envelopeEnd {
	first, last := strings.Index(text, markerStart), strings.LastIndex(text, markerStart)
	if first < 0 {
		return envelopeEnd{} // no marker: anything may be it
	}
	end := strings.Index(text[last+len(markerStart):], "__")
	if end < 0 {
		return envelopeEnd{head: strings.TrimSuffix(text[:first], "'")}
	}
	end += last + len(markerStart) + len("__")
	return envelopeEnd{head: strings.TrimSuffix(text[:first], "'"), tail: strings.TrimPrefix(text[end:], "'")}
}

// markerStart begins every slot marker.
const markerStart = "__SPEAR_"

func (e envelopeEnd) mayBe(src string) bool {
	return len(src) >= len(e.head)+len(e.tail) && strings.HasPrefix(src, e.head) && strings.HasSuffix(src, e.tail)
}

// mayHaveEnds tells whether src starts and ends as one of terminal's envelopes with text of its
// own may.
func mayHaveEnds(terminal, src string) bool {
	for _, e := range templatesOf(terminal).ends() {
		if e.mayBe(src) {
			return true
		}
	}
	return false
}
