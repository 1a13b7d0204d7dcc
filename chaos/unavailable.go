package chaos

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Window is a stretch of a run in which appends were waiting and none
// was acknowledged, with the events (faults) noted in it.
type Window struct {
	From, To time.Duration
	Waiting  int // appends waiting at some time in the window
	Events   []Event
}

func (w Window) String() string {
	ev := make([]string, len(w.Events))
	for i, e := range w.Events {
		ev[i] = fmt.Sprintf("%s at %v", e.What, e.At.Round(time.Millisecond))
	}
	return fmt.Sprintf("%v to %v (%v): %d appends waiting; %s", w.From.Round(time.Millisecond), w.To.Round(time.Millisecond),
		(w.To - w.From).Round(time.Millisecond), w.Waiting, strings.Join(ev, ", "))
}

// Unavailability returns every window longer than min in which at least
// one append was waiting and none was acknowledged: the time writers
// could not write. Idle time (nothing waiting) is not in any window.
func Unavailability(h *History, min time.Duration) []Window {
	as, end := h.Appends(), historyEnd(h)
	acks := []time.Duration{0}
	for _, a := range as {
		if a.Outcome == OK {
			acks = append(acks, a.Complete)
		}
	}
	sort.Slice(acks, func(i, j int) bool { return acks[i] < acks[j] })
	acks = append(acks, end)
	var out []Window
	for i := 1; i < len(acks); i++ {
		for _, w := range waiting(as, acks[i-1], acks[i]) {
			if w.To-w.From > min {
				w.Events = eventsIn(h, w.From, w.To)
				out = append(out, w)
			}
		}
	}
	return out
}

// waiting returns the union of the waiting intervals of appends within
// (from, to), a stretch with no acknowledgement inside.
func waiting(as []Append, from, to time.Duration) []Window {
	var iv []Window
	for _, a := range as {
		done := a.Complete
		if a.Outcome == Pending {
			done = to
		}
		if a.Invoke < to && done > from {
			iv = append(iv, Window{From: max(a.Invoke, from), To: min(done, to), Waiting: 1})
		}
	}
	sort.Slice(iv, func(i, j int) bool { return iv[i].From < iv[j].From })
	var out []Window
	for _, w := range iv {
		if n := len(out); n > 0 && w.From <= out[n-1].To {
			out[n-1].To, out[n-1].Waiting = max(out[n-1].To, w.To), out[n-1].Waiting+1
			continue
		}
		out = append(out, w)
	}
	return out
}

// eventsIn returns the events noted within [from-50ms, to]: a fault is
// noted just before its signal is sent, so the one that opened a window
// is noted a moment before the window starts.
func eventsIn(h *History, from, to time.Duration) []Event {
	var out []Event
	for _, e := range h.Events() {
		if e.At >= from-50*time.Millisecond && e.At <= to {
			out = append(out, e)
		}
	}
	return out
}
