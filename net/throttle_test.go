package net

import (
	"sync"
	"testing"
	"time"
)

// Kafka: KIP-219. A throttled client is answered at once, with its
// throttle time in the response, and its channel stays muted (not read)
// until the throttle time has passed: a pipelined request reaches the
// handler only then. The same holds after a NoResponse (acks=0).
func TestThrottleMutesAfterResponse(t *testing.T) {
	const throttle = 300 * time.Millisecond
	for _, noResponse := range []bool{false, true} {
		forEachDesign(t, func(t *testing.T, d design) {
			var mu sync.Mutex
			seen := map[int32]time.Time{}
			h := HandlerFunc(func(req *Request, respond func(Response)) {
				mu.Lock()
				seen[req.CorrelationID] = time.Now()
				mu.Unlock()
				if req.CorrelationID == 1 {
					r := Response{Parts: []Part{{Bytes: []byte("x")}}, Throttle: throttle}
					if noResponse {
						r = Response{NoResponse: true, Throttle: throttle}
					}
					respond(r)
					return
				}
				echo(req, respond)
			})
			s := start(t, d, Config{}, h)
			c := s.dial(t)
			c.Write(append(frame(produceV3(1), nil), frame(produceV3(2), nil)...))
			if !noResponse {
				if corr, _ := readResponse(t, c, false); corr != 1 {
					t.Fatalf("first response has correlation %d", corr)
				}
			}
			if corr, _ := readResponse(t, c, false); corr != 2 {
				t.Fatalf("second response has correlation %d", corr)
			}
			mu.Lock()
			gap := seen[2].Sub(seen[1])
			mu.Unlock()
			if gap < throttle-10*time.Millisecond {
				t.Errorf("noResponse=%v: second request served %v after the throttled one, want at least %v", noResponse, gap, throttle)
			}
		})
	}
}

// A response without Throttle unmutes at once: the pipelined request is
// served without waiting (the throttle above is what delays it). The
// bound is loose, ten times the throttle above, so that a loaded machine
// under the race detector does not fail it; a channel left muted, the bug
// this guards against, never answers the second request at all.
func TestNoThrottleNoWait(t *testing.T) {
	forEachDesign(t, func(t *testing.T, d design) {
		s := start(t, d, Config{}, HandlerFunc(echo))
		c := s.dial(t)
		t0 := time.Now()
		c.Write(append(frame(produceV3(1), nil), frame(produceV3(2), nil)...))
		readResponse(t, c, false)
		readResponse(t, c, false)
		if el := time.Since(t0); el > 3*time.Second {
			t.Errorf("two unthrottled requests took %v", el)
		}
	})
}
