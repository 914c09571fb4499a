package report

import (
	"os"
	"testing"
)

// BenchmarkRead reports one turn of the trail named by SPEAR_REPORT_TRAIL (make bench's case
// report measures the whole command against jq on a 1 GB trail).
func BenchmarkRead(b *testing.B) {
	trail := os.Getenv("SPEAR_REPORT_TRAIL")
	if trail == "" {
		b.Skip("SPEAR_REPORT_TRAIL names no trail")
	}
	fi, err := os.Stat(trail)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	for b.Loop() {
		r, err := Read([]string{trail}, Filter{Turn: "nope"})
		if err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
}
