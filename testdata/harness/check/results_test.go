package main

import (
	"testing"

	"github.com/spear-shell/spear-shell/testdata/harness/fakemodel"
)

// What each terminal handed back, as recorded from the real terminals, read as output and exit code.
func TestResults(t *testing.T) {
	tests := []struct {
		name string
		read func(fakemodel.Record) (string, int)
		rec  fakemodel.Record
		out  string
		code int
	}{
		{"claude ok", claudeResult, fakemodel.Record{Output: "hello\nerr"}, "hello\nerr", 0},
		{"claude exit", claudeResult, fakemodel.Record{Output: "Exit code 7", IsError: true}, "", 7},
		{"claude exit with output", claudeResult, fakemodel.Record{Output: "Exit code 3\nspear-capability: write-refused: x", IsError: true},
			"spear-capability: write-refused: x", 3},
		{"claude other error", claudeResult, fakemodel.Record{Output: "Permission denied", IsError: true}, "Permission denied", -1},
		{"codex", codexResult, fakemodel.Record{Output: "Chunk ID: e6c962\nWall time: 0.0000 seconds\nProcess exited with code 7\nOriginal token count: 3\nOutput:\nhello\nerr\n"},
			"hello\nerr\n", 7},
		{"codex unreadable", codexResult, fakemodel.Record{Output: "aborted"}, "aborted", -1},
		{"gemini ok", geminiResult, fakemodel.Record{Output: "<untrusted_context>\nOutput: hello\nerr\nProcess Group PGID: 3259\n</untrusted_context>"},
			"hello\nerr", 0},
		{"gemini exit", geminiResult, fakemodel.Record{Output: "<untrusted_context>\nOutput: (empty)\nExit Code: 7\nProcess Group PGID: 3316\n</untrusted_context>"},
			"", 7},
		{"subprocess", subprocessResult, fakemodel.Record{Output: `{"output": "a\n", "returncode": 2}`}, "a\n", 2},
	}
	for _, tt := range tests {
		out, code := tt.read(tt.rec)
		if out != tt.out || code != tt.code {
			t.Errorf("%s: got %q exit %d, want %q exit %d", tt.name, out, code, tt.out, tt.code)
		}
	}
}

// The judge of a capability step wants the exit code, the words, and exactly one decision.
func TestJudgeAnswered(t *testing.T) {
	list := steps[5]
	invoke := steps[7]
	login := steps[13]
	answer := "<<<spear-capability result notes/search_notes token=t audit_id=abc>>>\n" + readResult + "\n<<<end>>>\n"
	tests := []struct {
		name string
		st   step
		out  string
		code int
		recs []auditRecord
		ok   bool
	}{
		{"list", list, "notes/search_notes READ", 0, []auditRecord{{Event: "capability_index_exposed"}}, true},
		{"list audited twice", list, "notes/search_notes READ", 0,
			[]auditRecord{{Event: "capability_index_exposed"}, {Event: "capability_index_exposed"}}, false},
		{"list unmatched too", list, "notes/search_notes READ", 0,
			[]auditRecord{{Event: "envelope_unmatched"}, {Event: "capability_index_exposed"}}, false},
		{"list 127", list, "spear-capability: command not found", 127, nil, false},
		{"invoke", invoke, answer, 0,
			[]auditRecord{{Event: "capability_invoked", AuditID: "abc"}, {Event: "capability_invoked", AuditID: "abc", Code: "ok"}}, true},
		{"bash -lc, the stub", login, "spear-capability: not-recognised: ...", 126, nil, true},
		{"bash -lc, a nested spear-shell", login, "spear-capability: no-capabilities: ... (a nested spear-shell ...)", 3, nil, true},
		{"bash -lc, 127", login, "bash: spear-capability: command not found", 127, nil, false},
		{"bash -lc, answered", login, "notes/search_notes READ", 0, []auditRecord{{Event: "capability_index_exposed"}}, false},
		{"invoke, another call's records", invoke, answer, 0,
			[]auditRecord{{Event: "capability_invoked", AuditID: "xyz"}, {Event: "capability_invoked", AuditID: "xyz", Code: "ok"}}, false},
	}
	for _, tt := range tests {
		if f := judgeAnswered(tt.st, tt.out, tt.code, tt.recs); (f == "") != tt.ok {
			t.Errorf("%s: judged %q, want ok=%v", tt.name, f, tt.ok)
		}
	}
}

// What each terminal hands back for an MCP call, read as text or the face's object, and judged.
func TestMCPResults(t *testing.T) {
	invoke := mcpSteps[2]
	refused := mcpSteps[4]
	object := `{"auditId":"a1","capability":"notes/search_notes","decision":"ok","external":"x","result":{"text":"n2  spear-shell"}}`
	recs := []auditRecord{{Event: "capability_invoked", AuditID: "a1", Face: "mcp"}, {Event: "capability_invoked", AuditID: "a1", Code: "ok", Face: "mcp"}}
	tests := []struct {
		name string
		st   mcpStep
		out  mcpOutput
		recs []auditRecord
		ok   bool
	}{
		{"claude object", invoke, claudeMCPResult(fakemodel.Record{Output: object}), recs, true},
		{"codex object", invoke, codexMCPResult(fakemodel.Record{Output: "Wall time: 0.1 seconds\nOutput:\n" + object}), recs, true},
		{"object without the result", invoke, claudeMCPResult(fakemodel.Record{Output: `{"auditId":"a1","capability":"notes/search_notes","decision":"ok"}`}), recs, false},
		{"no face", invoke, claudeMCPResult(fakemodel.Record{Output: object}),
			[]auditRecord{{Event: "capability_invoked", AuditID: "a1"}, {Event: "capability_invoked", AuditID: "a1", Code: "ok"}}, false},
		{"gemini text", invoke, geminiMCPResult(fakemodel.Record{Output: "<untrusted_context>\nnotes/search_notes audit a1\n</untrusted_context>\n<untrusted_context>\nn2  spear-shell\n</untrusted_context>"}), recs, true},
		{"claude refusal", refused, claudeMCPResult(fakemodel.Record{Output: "spear-capability: write-refused: no", IsError: true}),
			[]auditRecord{{Event: "capability_refused", Code: "write-refused", Face: "mcp"}}, true},
		{"claude refusal not isError", refused, claudeMCPResult(fakemodel.Record{Output: "spear-capability: write-refused: no"}),
			[]auditRecord{{Event: "capability_refused", Code: "write-refused", Face: "mcp"}}, false},
		{"codex refusal object", refused, codexMCPResult(fakemodel.Record{Output: "Wall time: 0 seconds\nOutput:\n{\"code\":\"write-refused\",\"message\":\"m\"}"}),
			[]auditRecord{{Event: "capability_refused", Code: "write-refused", Face: "mcp"}}, true},
		{"codex wrong code", refused, codexMCPResult(fakemodel.Record{Output: "Wall time: 0 seconds\nOutput:\n{\"code\":\"malformed\",\"message\":\"write-refused\"}"}),
			[]auditRecord{{Event: "capability_refused", Code: "write-refused", Face: "mcp"}}, false},
	}
	for _, tt := range tests {
		if f := judgeMCP(tt.st, tt.out, tt.recs); (f == "") != tt.ok {
			t.Errorf("%s: judged %q, want ok=%v", tt.name, f, tt.ok)
		}
	}
}
