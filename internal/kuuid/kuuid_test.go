package kuuid

import (
	"encoding/base64"
	"testing"
)

// Kafka: Uuid.randomUuid never returns an id whose string starts with
// '-' (kafka-storage format -t took it for an option); its
// ids are version 4, variant 2. In 20,000 draws a leading '-' would
// come up about 300 times if it were not excluded.
func TestRandom(t *testing.T) {
	seen := map[[16]byte]bool{}
	for range 20000 {
		id := Random()
		s := String(id)
		if len(s) != 22 || s[0] == '-' {
			t.Fatalf("id %q", s)
		}
		if id[6]>>4 != 4 || id[8]>>6 != 2 {
			t.Fatalf("id %x is not a version 4, variant 2 UUID", id)
		}
		if seen[id] {
			t.Fatalf("id %s drawn twice", s)
		}
		seen[id] = true
		back, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil || [16]byte(back) != id {
			t.Fatalf("%s does not decode to %x: %v", s, id, err)
		}
	}
}
