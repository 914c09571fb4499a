package interp

import (
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/spear-shell/spear-shell/interp/invocation"
)

var update = flag.Bool("update", false, "rewrite testdata/recognition-inputs.json")

// recogTest is one recognition case. For Answer, segs renders the segments:
// "F:<text>" for forwarded text, else "verb target... [json]".
type recogTest struct {
	in      string
	verdict Verdict
	code    string
	reason  string // Refuse: a substring of the reason
	segs    []string
}

func fwd(in string) recogTest { return recogTest{in: in, verdict: Forward} }
func notAloneT(in, reason string) recogTest {
	return recogTest{in: in, verdict: Refuse, code: CodeNotAlone, reason: reason}
}
func mal(in, reason string) recogTest {
	return recogTest{in: in, verdict: Refuse, code: CodeMalformed, reason: reason}
}
func ans(in string, segs ...string) recogTest {
	return recogTest{in: in, verdict: Answer, segs: segs}
}

const (
	pipeline = "part of a pipeline"
	shared   = "shared a line"
	cmdSubst = "command substitution"
	unsafe   = "cannot be parsed safely"
	usage    = "usage: spear-capability list"
)

var recogTests = []recogTest{
	// Plain forwarding.
	fwd(""),
	fwd("true"),
	fwd("ls -la\n"),
	fwd("echo spear-capability"),
	fwd("echo 'spear-capability list'"),
	fwd(`echo "spear-capability list"`),
	fwd("grep -r spear-capability ."),
	fwd("# spear-capability list"),
	fwd("echo hi # spear-capability list"),
	fwd("printf '%s\\n' spear-capability"),
	fwd("x=spear-capability"),
	fwd("export X=spear-capability"),
	fwd("[[ -n spear-capability ]]"),
	fwd("test spear-capability = x"),
	fwd("case spear-capability in spear-capability) echo;; esac"),
	fwd("for spear in spear-capability; do echo $spear; done"),
	fwd("spear-capability() { :; }"),
	fwd("function spear-capability { :; }"),
	fwd("command -v spear-capability"),
	fwd("command -V spear-capability"),
	fwd("command -pv spear-capability"),
	fwd("type spear-capability"),
	fwd("which spear-capability"),
	fwd("exec -a spear-capability ls"),
	fwd("exec -al x spear-capability"),
	fwd("builtin spear-capability list"), // not a builtin: bash runs nothing
	fwd("command builtin spear-capability list"),
	fwd("man spear-capability"),
	fwd("echo spear-capability | cat"),
	fwd("cat <<'EOF'\nspear-capability list\nEOF"),
	fwd("cat <<\"EOF\"\n$(spear-capability list)\nEOF"),
	fwd("cat <<\"E\"OF\n$(spear-capability list)\nEOF"),
	fwd("cat <<'E'OF\n$(spear-capability list)\nEOF"),
	fwd("cat <<E\\OF\n$(spear-capability list)\nEOF"),
	fwd("cat <<\\EOF\n`spear-capability list`\nEOF"),
	fwd("cat <<-'EOF'\n\t$(spear-capability list)\n\tEOF"),
	fwd("cat <<EOF\nspear-capability list\nEOF"),
	fwd("cat <<<spear-capability"),
	fwd("echo `echo spear-capability`"),
	fwd("echo $(echo spear-capability list)"),
	// Forms that make the name only at run time are the real shell's business.
	fwd("$X list"),
	fwd("${X} list"),
	fwd("\"$X\" list"),
	fwd("$(echo spear-capability) list"),
	fwd("`echo spear-capability` list"),
	fwd("spear-capabilit{y,} list"),
	fwd("{spear-capability,list}"),
	fwd("spear-capabilit? list"),
	fwd("spear-capabilit[y] list"),
	fwd("eval spear-capability list"),
	fwd("bash -c 'spear-capability list'"),
	fwd("sh -c \"spear-capability list\""),
	fwd("env spear-capability list"),
	fwd("xargs spear-capability < /dev/null"),
	fwd("nohup spear-capability list"),
	fwd("sudo spear-capability list"),
	fwd("./spear-capability list"),
	fwd("/usr/bin/spear-capability list"),
	fwd("~/bin/spear-capability list"),
	fwd("\"time\" spear-capability list"),
	// Unicode look-alikes are not the name.
	fwd("spear‐capability list"),
	fwd("spear−capability list"),
	fwd("ѕpear-capability list"),
	fwd("spear-capabilitу list"),
	fwd("ｓpear-capability list"),
	fwd("spear-capability\u200b list"),
	fwd("spear_capability list"),
	fwd("spear-capabilities list"),
	fwd("Spear-capability list"),

	// Answered.
	ans("spear-capability list", "list"),
	ans("spear-capability list\n", "list"),
	ans("  spear-capability   list  ", "list"),
	ans("spear-capability list;", "list"),
	ans("spear-capability list ;", "list"),
	ans("spear-capability list # what is there", "list"),
	ans("spear-capability list; # note", "list"),
	ans("\"spear-capability\" list", "list"),
	ans("'spear-capability' list", "list"),
	ans("spear\\-capability list", "list"),
	ans("'spear'\"-capability\" list", "list"),
	ans("sp'ear'-ca\"pab\"ility list", "list"),
	ans("spear-\\\ncapability list", "list"),
	ans("spear-capability \\\n list", "list"),
	ans("spear-capability 'list'", "list"),
	ans("spear-capability l\\ist", "list"),
	ans("spear-capability describe fw/read", "describe fw/read"),
	ans("spear-capability describe fw/read fw/write x/y", "describe fw/read fw/write x/y"),
	ans("spear-capability describe 'fw/read'", "describe fw/read"),
	ans("spear-capability describe $HOME/x", "describe $HOME/x"),
	ans("spear-capability describe '*'/x", "describe */x"),
	ans("spear-capability describe */*", "describe */*"),
	ans("spear-capability describe ~/x", "describe ~/x"),
	ans("spear-capability describe {a,b}/c", "describe {a,b}/c"),
	ans("spear-capability describe \"$(date)\"/x", "describe $(date)/x"),
	ans("spear-capability invoke fw/read '{}'", "invoke fw/read {}"),
	ans("spear-capability invoke fw/read '{\"path\": \"a b\"}'", "invoke fw/read {\"path\": \"a b\"}"),
	ans("spear-capability invoke fw/read \"{\\\"n\\\": 1}\"", "invoke fw/read {\"n\": 1}"),
	ans("spear-capability invoke fw/read {}", "invoke fw/read {}"),
	ans("spear-capability invoke fw/read '{\"n\": 12345678901234567890.000000000000000001}'",
		"invoke fw/read {\"n\": 12345678901234567890.000000000000000001}"),
	ans("spear-capability invoke fw/read '{\"n\": -0.5e+10, \"m\": 0, \"o\": 1E-2}'",
		"invoke fw/read {\"n\": -0.5e+10, \"m\": 0, \"o\": 1E-2}"),
	ans("spear-capability invoke fw/read ' {\"a\": [1, {\"b\": null}], \"c\": true} '",
		"invoke fw/read  {\"a\": [1, {\"b\": null}], \"c\": true} "),
	ans("spear-capability invoke fw/read '{\"a\": {\"x\": 1}, \"b\": {\"x\": 2}}'",
		"invoke fw/read {\"a\": {\"x\": 1}, \"b\": {\"x\": 2}}"),
	ans("spear-capability invoke fw/read '{\"s\": \"\\u00e9\\n\\\"\"}'",
		"invoke fw/read {\"s\": \"\\u00e9\\n\\\"\"}"),
	ans("spear-capability invoke fw/read '{\"s\": \"é ✓\"}'", "invoke fw/read {\"s\": \"é ✓\"}"),
	ans("spear-capability invoke fw/read '{\"cmd\": \"$(rm -rf /)\"}'", "invoke fw/read {\"cmd\": \"$(rm -rf /)\"}"),
	ans("spear-capability invoke fw/read '{\n  \"a\": 1\n}'", "invoke fw/read {\n  \"a\": 1\n}"),
	ans("spear-capability invoke fw/read '{\"a\":1}' # run it", "invoke fw/read {\"a\":1}"),
	ans("echo a\nspear-capability list", "F:echo a\n", "list"),
	ans("spear-capability list\necho b", "list", "F:echo b"),
	ans("echo a\nspear-capability list\necho b\n", "F:echo a\n", "list", "F:echo b\n"),
	ans("cd /tmp; x=1\nspear-capability list\necho $x; ls\n", "F:cd /tmp; x=1\n", "list", "F:echo $x; ls\n"),
	ans("spear-capability list\nspear-capability describe a/b", "list", "describe a/b"),
	ans("echo a\n# note\nspear-capability list\n# after\necho b\nspear-capability describe a/b\n",
		"F:echo a\n# note\n", "list", "F:echo b\n", "describe a/b"),
	ans("# only a comment\nspear-capability list\n# and another\n", "list"),
	ans("cat <<EOF\nx\nEOF\nspear-capability list", "F:cat <<EOF\nx\nEOF\n", "list"),
	ans("cat <<EOF;\nx\nEOF\nspear-capability list", "F:cat <<EOF;\nx\nEOF\n", "list"),
	ans("cat <<'EOF'\nspear-capability list\nEOF\nspear-capability list", "F:cat <<'EOF'\nspear-capability list\nEOF\n", "list"),
	ans("if true; then\n  echo a\nfi\nspear-capability list", "F:if true; then\n  echo a\nfi\n", "list"),
	ans("echo 'a\nb'\nspear-capability list", "F:echo 'a\nb'\n", "list"),
	ans("echo a \\\n b\nspear-capability list", "F:echo a \\\n b\n", "list"),
	// bash ends a comment at the newline even after a backslash.
	ans("# note \\\nspear-capability list", "list"),
	ans("echo a # note \\\nspear-capability list", "F:echo a # note \\\n", "list"),
	ans("echo a # x \\\n# y \\\nspear-capability list", "F:echo a # x \\\n# y \\\n", "list"),
	ans("[[ -n x ]] # x \\\n# a\ncat <<'EOF'\nb\nEOF\nspear-capability list", "F:[[ -n x ]] # x \\\n# a\ncat <<'EOF'\nb\nEOF\n", "list"),
	mal("echo a # x \\\n)\nspear-capability list", unsafe),
	// The correction only touches comments: a single-quoted argument keeps its
	// backslash-newline (which is not valid JSON).
	mal("spear-capability invoke a/b '{\"a\": \"x # y \\\nz\"}'", "invalid escape"),
	ans("spear-capability invoke a/b \"{\\\"a\\\": \\\"x # y \\\nz\\\"}\"", "invoke a/b {\"a\": \"x # y z\"}"),
	notAloneT("echo `# x \\\necho a`; (spear-capability list)", "subshell"),
	fwd("echo `# x \\\nspear-capability list`"),
	fwd("echo `echo a # x \\\nspear-capability list`"),

	// Not alone.
	notAloneT("echo a | spear-capability list", pipeline),
	notAloneT("spear-capability list | cat", pipeline),
	notAloneT("spear-capability list |& cat", pipeline),
	notAloneT("spear-capability list && echo ok", "&& list"),
	notAloneT("false || spear-capability list", "|| list"),
	notAloneT("spear-capability list; echo b", shared),
	notAloneT("echo a; spear-capability list", shared),
	notAloneT("spear-capability list; spear-capability list", shared),
	notAloneT("echo a \\\n; spear-capability list", shared),
	notAloneT("spear-capability list &", "background"),
	notAloneT("spear-capability list & echo x", "background"),
	notAloneT("spear-capability list > out", "redirection"),
	notAloneT("spear-capability list 2>&1", "redirection"),
	notAloneT("< /dev/null spear-capability list", "redirection"),
	notAloneT("spear-capability list <<EOF\nx\nEOF", "redirection"),
	notAloneT("X=1 spear-capability list", "assignment"),
	notAloneT("! spear-capability list", "negated"),
	notAloneT("(spear-capability list)", "subshell"),
	notAloneT("( spear-capability list )", "subshell"),
	notAloneT("{ spear-capability list; }", "group"),
	notAloneT("echo $(spear-capability list)", cmdSubst),
	notAloneT("echo \"$(spear-capability list)\"", cmdSubst),
	notAloneT("echo `spear-capability list`", "`...` command substitution"),
	notAloneT("x=$(spear-capability list)", cmdSubst),
	notAloneT("local x=$(spear-capability list)", cmdSubst),
	notAloneT("declare -a x=($(spear-capability list))", cmdSubst),
	notAloneT("a=( $(spear-capability list) )", cmdSubst),
	notAloneT("a[$(spear-capability list)]=1", cmdSubst),
	notAloneT("echo ${x:-$(spear-capability list)}", cmdSubst),
	notAloneT("echo ${x[$(spear-capability list)]}", cmdSubst),
	notAloneT("echo ${x:$(spear-capability list):1}", cmdSubst),
	notAloneT("echo ${x/a/$(spear-capability list)}", cmdSubst),
	notAloneT("echo $(( $(spear-capability list) + 1 ))", cmdSubst),
	notAloneT("(( $(spear-capability list) ))", cmdSubst),
	notAloneT("let x=$(spear-capability list)", cmdSubst),
	notAloneT("[[ $(spear-capability list) ]]", cmdSubst),
	notAloneT("[[ -n x && $(spear-capability list) == y ]]", cmdSubst),
	notAloneT("cat <(spear-capability list)", "process substitution"),
	notAloneT("tee >(spear-capability list)", "process substitution"),
	notAloneT("echo $(echo $(spear-capability list))", cmdSubst),
	notAloneT("echo $(echo a; spear-capability list)", cmdSubst),
	notAloneT("echo $(spear-capability list | cat)", pipeline),
	notAloneT("if spear-capability list; then :; fi", "if statement"),
	notAloneT("if true; then spear-capability list; fi", "if statement"),
	notAloneT("if false; then :; elif spear-capability list; then :; fi", "if statement"),
	notAloneT("if false; then :; else spear-capability list; fi", "if statement"),
	notAloneT("while spear-capability list; do :; done", "while loop"),
	notAloneT("until spear-capability list; do :; done", "until loop"),
	notAloneT("while false; do spear-capability list; done", "while loop"),
	notAloneT("for i in 1; do spear-capability list; done", "for loop"),
	notAloneT("for ((i=0;i<1;i++)); do spear-capability list; done", "for loop"),
	notAloneT("for i in $(spear-capability list); do :; done", cmdSubst),
	notAloneT("select x in a; do spear-capability list; done", "select loop"),
	notAloneT("case x in x) spear-capability list;; esac", "case statement"),
	notAloneT("case $(spear-capability list) in x) :;; esac", cmdSubst),
	notAloneT("case x in $(spear-capability list)) :;; esac", cmdSubst),
	notAloneT("f() { spear-capability list; }", "group"),
	notAloneT("f() ( spear-capability list )", "subshell"),
	notAloneT("function f { spear-capability list; }", "group"),
	notAloneT("f() { spear-capability list; }\nf", "group"),
	notAloneT("exec spear-capability list", "through exec"),
	notAloneT("exec -c spear-capability list", "through exec"),
	notAloneT("exec -l -a name spear-capability list", "through exec"),
	notAloneT("exec -aname spear-capability list", "through exec"),
	notAloneT("exec -- spear-capability list", "through exec"),
	notAloneT("command spear-capability list", "through command"),
	notAloneT("command -p spear-capability list", "through command"),
	notAloneT("command -- spear-capability list", "through command"),
	notAloneT("\"command\" spear-capability list", "through command"),
	notAloneT("\\exec spear-capability list", "through exec"),
	notAloneT("command exec spear-capability list", "through command"),
	notAloneT("exec command spear-capability list", "through exec"),
	notAloneT("builtin exec spear-capability list", "through builtin"),
	notAloneT("builtin command spear-capability list", "through builtin"),
	notAloneT("command \"spear-capability\" list", "through command"),
	notAloneT("time spear-capability list", "time"),
	notAloneT("time -p spear-capability list", "time"),
	notAloneT("time -- spear-capability list", "time"),
	notAloneT("time -p -- spear-capability list", "time"),
	notAloneT("coproc spear-capability list", "coprocess"),
	notAloneT("coproc x { spear-capability list; }", "group"),
	notAloneT("cat <<EOF\n$(spear-capability list)\nEOF", cmdSubst),
	notAloneT("cat <<EOF\n`spear-capability list`\nEOF", cmdSubst),
	notAloneT("cat <<EOF\n${x:-$(spear-capability list)}\nEOF", cmdSubst),
	notAloneT("cat <<-EOF\n\t$(spear-capability list)\n\tEOF", cmdSubst),
	notAloneT("cat <<A <<'B'\n$(spear-capability list)\nA\nx\nB", cmdSubst),
	notAloneT("cat <<'A' <<B\nx\nA\n$(spear-capability list)\nB", cmdSubst),
	notAloneT("echo $(cat <<EOF\n$(spear-capability list)\nEOF\n)", cmdSubst),
	notAloneT("spear-capability describe $(spear-capability list)", cmdSubst),
	notAloneT("spear-capability invoke a/b \"$(spear-capability list)\"", cmdSubst),
	notAloneT("spear-capability invoke a/b '{}' `spear-capability list`", cmdSubst),
	notAloneT("echo a && \\\nspear-capability list", "&& list"),
	notAloneT("echo a |\nspear-capability list", pipeline),
	notAloneT("cat <<EOF; spear-capability list\nx\nEOF", shared),
	notAloneT("echo $(\nspear-capability list\n)", cmdSubst),
	notAloneT("echo `echo a # x \\\n` ; (spear-capability list)", "subshell"),
	notAloneT("echo $(# x \\\nspear-capability list)", cmdSubst),
	notAloneT("spear-capability list\necho a | spear-capability list", pipeline),
	notAloneT("spear-capability bogus | cat", pipeline),

	// Malformed.
	mal("spear-capability", "missing subcommand"),
	mal("spear-capability ''", "unknown subcommand"),
	mal("spear-capability lst", "unknown subcommand \"lst\""),
	mal("spear-capability LIST", "unknown subcommand"),
	mal("spear-capability --help", "unknown subcommand"),
	mal("spear-capability $verb", "unknown subcommand \"$verb\""),
	mal("spear-capability list extra", "list takes no arguments"),
	mal("spear-capability describe", "at least one"),
	mal("spear-capability describe fw", "<id>/<tool>"),
	mal("spear-capability describe fw/", "<id>/<tool>"),
	mal("spear-capability describe /read", "<id>/<tool>"),
	mal("spear-capability describe a/b/c", "<id>/<tool>"),
	mal("spear-capability describe a/b c", "<id>/<tool>"),
	mal("spear-capability invoke", "exactly two"),
	mal("spear-capability invoke fw/read", "exactly two"),
	mal("spear-capability invoke fw/read '{}' '{}'", "exactly two"),
	mal("spear-capability invoke fw/read {\"a\": 1}", "exactly two"),
	mal("spear-capability invoke fw '{}'", "<id>/<tool>"),
	mal("spear-capability invoke fw/read ''", "empty"),
	mal("spear-capability invoke fw/read null", "null, not an object"),
	mal("spear-capability invoke fw/read '[]'", "an array, not an object"),
	mal("spear-capability invoke fw/read '[{}]'", "an array"),
	mal("spear-capability invoke fw/read '\"x\"'", "a string"),
	mal("spear-capability invoke fw/read 1", "a number"),
	mal("spear-capability invoke fw/read true", "a boolean"),
	mal("spear-capability invoke fw/read '{}{}'", "after the object"),
	mal("spear-capability invoke fw/read '{} x'", "after the object"),
	mal("spear-capability invoke fw/read '{\"a\":1,\"a\":2}'", "duplicate key \"a\""),
	mal("spear-capability invoke fw/read '{\"a\":1,\"\\u0061\":2}'", "duplicate key \"a\""),
	mal("spear-capability invoke fw/read '{\"x\":{\"b\":1,\"b\":1}}'", "duplicate key \"b\""),
	mal("spear-capability invoke fw/read '{\"x\":[{\"b\":1,\"b\":1}]}'", "duplicate key \"b\""),
	mal("spear-capability invoke fw/read '{\"a\":1,}'", "expected a string key"),
	mal("spear-capability invoke fw/read '{\"a\" 1}'", "expected ':'"),
	mal("spear-capability invoke fw/read '{\"a\":01}'", "expected ',' or '}'"),
	mal("spear-capability invoke fw/read '{\"a\":1.}'", "digits expected"),
	mal("spear-capability invoke fw/read '{\"a\":.5}'", "invalid character"),
	mal("spear-capability invoke fw/read '{\"a\":+1}'", "invalid character"),
	mal("spear-capability invoke fw/read '{\"a\":NaN}'", "invalid character"),
	mal("spear-capability invoke fw/read '{\"a\":1e}'", "exponent"),
	mal("spear-capability invoke fw/read '{\"a\":tru}'", "invalid character"),
	mal("spear-capability invoke fw/read '{\"a\":\"\\x\"}'", "invalid escape"),
	mal("spear-capability invoke fw/read '{\"a\":\"\\u12\"}'", "invalid \\u escape"),
	mal("spear-capability invoke fw/read '{\"a\":\"tab\there\"}'", "control character"),
	mal("spear-capability invoke fw/read '{\"a\":\"x'", "unexpected end"),
	mal("spear-capability invoke fw/read '{\"a\":[1,2}'", "expected ',' or ']'"),
	mal("spear-capability invoke fw/read '{a:1}'", "expected a string key"),
	mal("spear-capability invoke fw/read \"{'a':1}\"", "expected a string key"),
	mal("spear-capability invoke fw/read '{\"a\":1}\n{\"b\":2}'", "after the object"),
	mal("spear-capability invoke fw/read $'{\"a\":1}'", "$'...'"),
	mal("spear-capability invoke fw/read \"$JSON\"", "invalid character '$'"),
	mal("spear-capability invoke fw/read \"$(cat args.json)\"", "invalid character '$'"),
	mal("spear-capability invoke fw/read '{\"a\":\"\xff\"}'", "UTF-8"),
	mal("$'spear-capability' list", "$'...'"),
	mal("$\"spear-capability\" list", "$'...'"),
	mal("$'spear\\x2dcapability' list", "$'...'"),
	mal("spear$'-'capability list", "$'...'"),
	mal("spear-capability $'list'", "$'...'"),
	mal("spear-capability describe $\"a/b\"", "$'...'"),
	mal("echo a\nspear-capability lst\necho b", "unknown subcommand"),
	mal("spear-capability list\nspear-capability bogus", "unknown subcommand"),

	// Input that cannot be trusted: refused when the name is in it, else forwarded.
	mal("spear-capability list\r", unsafe),
	mal("spear-capability list\r\n", unsafe),
	mal("echo a\r\nspear-capability list\r\n", unsafe),
	mal("echo spear-capability\r", unsafe),
	fwd("echo a\r\n"),
	fwd("ls\r"),
	mal("!(spear-capability list)", unsafe),
	mal("echo !(spear-capability)", unsafe),
	mal("echo @(x) spear-capability", unsafe),
	fwd("ls !(*.go)"),
	fwd("[[ x == @(a|b) ]]"),
	fwd("[[ x == !(spear-capability) ]]"),             // a pattern in [[ ]]: text
	mal("[[ -n $( !(\\spear-capability)) ]]", unsafe), // a command inside [[ ]]: bash runs it
	mal("[[ $(echo !(spear-capability)) ]]", unsafe),
	ans("spear-capabil\x00ity list", "list"), // bash drops the NUL byte
	ans("[[ x == @(a|b) ]]\nspear-capability list", "F:[[ x == @(a|b) ]]\n", "list"),
	mal("echo 'spear-capability", unsafe),
	mal("echo \"spear-capability", unsafe),
	mal("spear-capability list )", unsafe),
	mal("echo $((spear-capability list) )", unsafe),
	mal("spear-capability list;;", unsafe),
	mal("if spear-capability list", unsafe),
	mal("echo 'spear'\"-capability\" (", unsafe),
	mal("echo spear-\\\ncapability (", unsafe),
	fwd("echo ("),
	fwd("if true"),
	fwd("echo 'unterminated"),
	mal("cat <<$x\nhello\n$x\nspear-capability list\n\necho done", unsafe),
	mal("cat <<\"$x\"\nspear-capability list\n$x", unsafe),
	fwd("cat <<$x\nhello\n$x\n"),
	// A partly quoted delimiter makes the body text even where mvdan, reading
	// it as unquoted, could not parse it.
	fwd("cat <<\"E\"OF\n$(\nEOF\necho spear-capability"),
	fwd("cat <<-'E'\"O\"F\n\t`\n\tEOF\necho spear-capability"),
	ans("cat <<'E'OF\n`\nEOF\nspear-capability list", "F:cat <<'E'OF\n`\nEOF\n", "list"),
	ans("cat <<\"E\"O\"F\"X >f\n$(\nEOFX\nspear-capability list", "F:cat <<\"E\"O\"F\"X >f\n$(\nEOFX\n", "list"),
	notAloneT("cat <<\"E\"OF\n$(\nEOF\necho | spear-capability list", pipeline),
	notAloneT("cat <<\"E\"OF <<'A'B\n$(\nEOF\n$(\nAB\n(spear-capability list)", "subshell"),
	mal("cat <<EOF\n$(\nEOF\nspear-capability list", unsafe),
	mal("echo '<<\"E\"OF'\n$(\nspear-capability list", unsafe),
	mal("cat <<EOF\nspear-capability list\n", unsafe),
	mal("! ! spear-capability list", unsafe),
	// Only the text is searched when the parse fails, so an escaped spelling
	// in broken input goes to the real shell (where the stub refuses it).
	fwd("echo $'\\x73pear-capability' ("),
}

// render describes segments as recogTest.segs does.
func render(segs []Segment) []string {
	var out []string
	for _, s := range segs {
		if s.Invocation == nil {
			out = append(out, "F:"+s.Forward)
			continue
		}
		parts := append([]string{s.Invocation.Verb}, s.Invocation.Targets...)
		if s.Invocation.Verb == "invoke" {
			parts = append(parts, s.Invocation.Arguments)
		}
		out = append(out, strings.Join(parts, " "))
	}
	return out
}

func TestAnalyze(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, tc := range recogTests {
		if seen[tc.in] {
			t.Errorf("duplicate case %q", tc.in)
		}
		seen[tc.in] = true
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			a := Analyze(tc.in)
			if a.Verdict != tc.verdict || a.Code != tc.code {
				t.Fatalf("Analyze(%q) = %v %q %q; want %v %q", tc.in, a.Verdict, a.Code, a.Reason, tc.verdict, tc.code)
			}
			if !strings.Contains(a.Reason, tc.reason) {
				t.Errorf("Analyze(%q) reason %q; want it to contain %q", tc.in, a.Reason, tc.reason)
			}
			if a.Verdict == Refuse && (a.Reason == "" || strings.Contains(a.Reason, "\n")) {
				t.Errorf("Analyze(%q) reason %q is not one line", tc.in, a.Reason)
			}
			if a.Verdict != Refuse && a.Reason != "" {
				t.Errorf("Analyze(%q) has a reason %q without refusing", tc.in, a.Reason)
			}
			if a.Code == CodeMalformed && !strings.Contains(a.Reason, unsafe) && !strings.Contains(a.Reason, usage) {
				t.Errorf("Analyze(%q) malformed reason %q does not show the usage", tc.in, a.Reason)
			}
			got := render(a.Segments)
			if strings.Join(got, "\x00") != strings.Join(tc.segs, "\x00") || len(got) != len(tc.segs) {
				t.Errorf("Analyze(%q) segments\n got %q\nwant %q", tc.in, got, tc.segs)
			}
		})
	}
}

// TestAnalyzeSource checks the invocation's source text and that the segments
// of an answer cover the input.
func TestAnalyzeSource(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, source string }{
		{"spear-capability list", "spear-capability list"},
		{"  spear-capability list ; # c\n", "spear-capability list"},
		{"echo a\n\"spear-capability\" describe 'a/b' # c\necho b", "\"spear-capability\" describe 'a/b'"},
		{"spear-capability invoke a/b '{\n}'\n", "spear-capability invoke a/b '{\n}'"},
	} {
		a := Analyze(tc.in)
		var inv *Invocation
		for _, s := range a.Segments {
			if s.Invocation != nil {
				inv = s.Invocation
			}
		}
		if inv == nil || inv.Source != tc.source {
			t.Errorf("Analyze(%q) source = %+v; want %q", tc.in, inv, tc.source)
		}
	}
}

// TestAnalyzeList checks that list carries no targets or arguments.
func TestAnalyzeList(t *testing.T) {
	t.Parallel()
	a := Analyze("spear-capability list")
	if inv := a.Segments[0].Invocation; len(inv.Targets) != 0 || inv.Arguments != "" {
		t.Errorf("list invocation = %+v; want no targets or arguments", inv)
	}
}

func TestCaseCount(t *testing.T) {
	t.Parallel()
	if n := len(recogTests) + len(quoteTests); n < 150 {
		t.Errorf("%d table cases; want at least 150", n)
	}
}

func TestNameInText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"spear-capability", true},
		{"sspear-capability", true},
		{"spespear-capability", true},
		{"'spear'\"-capa\\bility\"", true},
		{"spear-\\\ncapability", true},
		{"spear-\ncapability", false},
		{"spear capability", false},
		{"spear-capabilit", false},
		{"", false},
	} {
		if got := invocation.NameInText(tc.in); got != tc.want {
			t.Errorf("NameInText(%q) = %v; want %v", tc.in, got, tc.want)
		}
	}
}

// TestRecognitionInputs keeps testdata/recognition-inputs.json, the inputs of recogTests, which
// package envelope's FuzzEnvelope takes as seeds, equal to the table (go test -update rewrites it).
func TestRecognitionInputs(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("[\n")
	for i, tc := range recogTests {
		line, err := json.Marshal(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		if i < len(recogTests)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	const path = "testdata/recognition-inputs.json"
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != b.String() {
		t.Errorf("%s is not recogTests' inputs (%v): run go test ./interp -run TestRecognitionInputs -update", path, err)
	}
}

func FuzzAnalyze(f *testing.F) {
	for _, tc := range recogTests {
		f.Add(tc.in)
	}
	for _, tc := range quoteTests {
		f.Add(tc.in + " list")
	}
	f.Add(nest("$(", "spear-capability list", ")", MaxNesting+1))
	f.Add(nest("`", "spear-capability list", "`", 3))
	f.Fuzz(func(t *testing.T, src string) {
		a := Analyze(src)
		if invocation.MayInvoke(src) && overBounds(src) != "" && (a.Verdict != Refuse || a.Code != CodeMalformed) {
			t.Fatalf("Analyze(%q) = %v %s past the input bounds", src, a.Verdict, a.Code)
		}
		switch a.Verdict {
		case Forward:
			if name := commandName(src); name {
				t.Fatalf("Analyze(%q) forwards an input whose parse runs the name", src)
			}
		case Refuse:
			if a.Code != CodeNotAlone && a.Code != CodeMalformed || a.Reason == "" {
				t.Fatalf("Analyze(%q) = %+v", src, a)
			}
		case Answer:
			var text strings.Builder
			for _, s := range a.Segments {
				if s.Invocation == nil {
					text.WriteString(s.Forward)
					continue
				}
				if !strings.Contains(src, s.Invocation.Source) {
					t.Fatalf("Analyze(%q): source %q is not in the input", src, s.Invocation.Source)
				}
				if s.Invocation.Verb == "invoke" {
					if err := invocation.CheckObject(s.Invocation.Arguments); err != nil {
						t.Fatalf("Analyze(%q): arguments %q: %v", src, s.Invocation.Arguments, err)
					}
				}
			}
			if Analyze(text.String()).Verdict != Forward {
				t.Fatalf("Analyze(%q): forwarded parts %q hold an invocation", src, text.String())
			}
		}
	})
}

// commandName is an independent check for FuzzAnalyze: does a plain parse put a
// word spelling the name first in any simple command?
func commandName(src string) bool {
	f, err := Parse(src)
	if err != nil {
		return false
	}
	found, corrected := false, false
	visit := func(n syntax.Node) bool {
		// Comments ending in a backslash are where Analyze corrects mvdan.
		if c, ok := n.(*syntax.Comment); ok && strings.HasSuffix(c.Text, "\\\n") {
			corrected = true
		}
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			if text, dyn := RemoveQuotes(c.Args[0]); !dyn && text == Name {
				found = true
			}
		}
		// Literal here-document bodies are text.
		if r, ok := n.(*syntax.Redirect); ok && r.Hdoc != nil && heredocKind(r.Word) != hdocExpanded {
			return false
		}
		return true
	}
	syntax.Walk(f, visit)
	return found && !corrected
}

func BenchmarkAnalyze(b *testing.B) {
	for _, bc := range []struct{ name, in string }{
		{"plain", "true"},
		{"command", "go test -race ./... 2>&1 | tail -n 20"},
		{"invocation", "spear-capability invoke fw/read '{\"path\": \"/src/a.c\", \"lines\": [1, 20]}'"},
		{"mixed", "cd /src\nspear-capability list\ngit status --short\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Analyze(bc.in)
			}
		})
	}
}
