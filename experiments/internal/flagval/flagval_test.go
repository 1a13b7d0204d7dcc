package flagval

import (
	"slices"
	"testing"
)

func TestSize(t *testing.T) {
	for s, want := range map[string]int64{"1KiB": 1 << 10, "768MiB": 768 << 20, "1GiB": 1 << 30, "1e6": 1e6, "2MB": 2e6, "512": 512, "0": 0, "10B": 10} {
		if got, err := Size(s); err != nil || got != want {
			t.Errorf("Size(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "x", "-1MiB", "KiB"} {
		if _, err := Size(s); err == nil {
			t.Errorf("Size(%q) accepted", s)
		}
	}
}

func TestList(t *testing.T) {
	if got := List(" a, ,b ,"); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("List: %q", got)
	}
}
