package diskmodel

import "testing"

func TestWarnings(t *testing.T) {
	calm := Calibration{CPUs: 4, LoadAvg1: 0.5, ColdResident: 0}
	if w := calm.warnings(); len(w) != 0 {
		t.Fatalf("idle machine, evicted file: warnings %q", w)
	}
	busy := Calibration{CPUs: 2, LoadAvg1: 1.5, ColdResident: 0.97, FSType: "tmpfs"}
	if w := busy.warnings(); len(w) != 2 {
		t.Fatalf("busy machine on tmpfs: warnings %q, want 2", w)
	}
}
