package chaos

import "testing"

// Unavailability is the time writers waited with nothing acknowledged
// (Kafka's failover time as a client sees it); an idle gap is not one.
func TestUnavailabilityFindsGapsWithWaitingAppends(t *testing.T) {
	h := build([]Append{
		ok("p1", 0, "a", 0, 10, 0),
		unknown("p2", 0, "b", 11, 300), // waiting across the outage
		ok("p1", 0, "c", 12, 250, 1),   // acknowledged after it
		ok("p1", 0, "d", 260, 270, 2),  // then normal service
		ok("p1", 0, "e", 900, 910, 3),  // after an idle gap: nothing was waiting
	}, nil, nil)
	h.mu.events = []Event{{At: ms(-100), What: "restart n1"}, {At: ms(8), What: "kill n0"}, {At: ms(200), What: "started n0"}}
	ws := Unavailability(h, ms(100))
	for _, w := range ws {
		t.Log(w)
	}
	if len(ws) != 1 || ws[0].From != ms(11) || ws[0].To != ms(250) || ws[0].Waiting != 2 ||
		len(ws[0].Events) != 2 || ws[0].Events[0].What != "kill n0" {
		t.Fatalf("windows: %v", ws)
	}
}

// An append still waiting when the history ends leaves its window open
// to the end.
func TestUnavailabilityKeepsAWindowOpenAtTheEnd(t *testing.T) {
	h := build([]Append{ok("p1", 0, "a", 0, 10, 0), {Client: "p2", Value: "b", Invoke: ms(20)}, unknown("p1", 0, "c", 30, 500)}, nil, nil)
	if ws := Unavailability(h, ms(100)); len(ws) != 1 || ws[0].From != ms(20) || ws[0].To != ms(501) {
		t.Fatalf("windows: %v", ws)
	}
}
