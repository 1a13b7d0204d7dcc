package segment

import "testing"

// The append invariants catch what they name.
func TestCheckAppendCatchesViolations(t *testing.T) {
	cfg, _ := DefaultConfig().checked()
	s, err := createSegment(t.TempDir(), 100, &cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if err := s.files().offsets.Append(150, 4000); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct{ oldEnd, first, next, size int64 }{
		"below the log end":    {200, 199, 201, 5000},
		"no progress":          {200, 200, 200, 5000},
		"index past the end":   {200, 200, 201, 4000},
		"relative offset 2^31": {200, 200, 100 + 1<<31 + 1, 5000},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			checkAppend(s, c.oldEnd, c.first, c.next, c.size)
		}()
	}
	checkAppend(s, 200, 200, 201, 5000) // a valid append passes
}
