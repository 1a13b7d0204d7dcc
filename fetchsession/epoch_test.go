package fetchsession

import (
	"math"
	"testing"
)

// Kafka: FetchMetadata.nextEpoch. The final epoch stays final and the
// epoch wraps from MaxInt32 to 1, never to 0 (the initial epoch).
func TestNextEpoch(t *testing.T) {
	for _, c := range [][2]int32{{0, 1}, {1, 2}, {-1, -1}, {math.MaxInt32, 1}} {
		if got := NextEpoch(c[0]); got != c[1] {
			t.Errorf("NextEpoch(%d) = %d, want %d", c[0], got, c[1])
		}
	}
}

// Kafka: newSessionId draws again until the id is positive and unused.
func TestSessionIDsPositiveAndUnused(t *testing.T) {
	draws := []int32{0, -3, 5, 5, 6}
	c := NewCache(Config{Slots: 5, EvictionMs: 10, NewID: func() int32 { d := draws[0]; draws = draws[1:]; return d }})
	for want := range []int32{5, 6} {
		ctx := c.NewContext(Request{Version: 17, Partitions: []Partition{{Key: Key{Topic: "t"}}}})
		r := c.Respond(ctx, make([]Answer, 1), 0)
		if r.SessionID != []int32{5, 6}[want] {
			t.Fatalf("session %d, want %d", r.SessionID, []int32{5, 6}[want])
		}
	}
}
