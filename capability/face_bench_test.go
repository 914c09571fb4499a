package capability

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/spear-shell/spear-shell/capability/keeper"
)

// BenchmarkFaceInvoke is one spear_invoke of a kept provider's echo, as the MCP face makes it
// on a long-lived turn (bench's face-invoke row measures it whole, through spear-mcp).
func BenchmarkFaceInvoke(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "spear-shell")
	_, self, _, _ := runtime.Caller(0)
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(filepath.Dir(self), "..", "cmd", "spear-shell")).CombinedOutput(); err != nil {
		b.Fatalf("build spear-shell: %v\n%s", err, out)
	}
	f := newFixture(b, obj("keep_providers", 300), provSpec{id: "p", entry: obj("read", []string{"echo"}),
		fake: obj("tools", []any{echoTool("echo")})})
	s := f.settings()
	s.Self, s.Face = bin, "mcp"
	s.Environ = []string{"SPEAR_HOME=" + f.home, "PATH=" + os.Getenv("PATH"), "HOME=" + f.dir}
	tn := NewTurn(s)
	defer func() {
		keeper.EndTurn(s.Settings, io.Discard)
		tn.Close("bench")
	}()
	ctx := context.Background()
	if _, r := tn.FaceInvoke(ctx, "p/echo", `{"message":"warm"}`); r != nil {
		b.Fatalf("warm: %+v", r)
	}
	for b.Loop() {
		if _, r := tn.FaceInvoke(ctx, "p/echo", `{"message":"x"}`); r != nil {
			b.Fatalf("invoke: %+v", r)
		}
	}
}
