package machine

import (
	"runtime"
	"testing"
)

func TestRead(t *testing.T) {
	m := Read()
	if m.CPUs != runtime.NumCPU() || m.GoVersion != runtime.Version() {
		t.Fatalf("%+v", m)
	}
	if Load1() < 0 || m.LoadStart == "unknown" || m.MemTotal == "unknown" {
		t.Fatalf("load %v, %+v: /proc not read", Load1(), m)
	}
}
