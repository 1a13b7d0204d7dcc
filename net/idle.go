package net

import "time"

// idleList orders a processor's idle connections (no request in flight) by
// last activity, oldest first: Kafka's Selector.IdleExpiryManager, an LRU.
// Connections with a request in flight are not in the list: they are never
// closed as idle, since their response is still owed. Owned by one processor.
type idleList struct {
	head, tail *rconn
}

// touch moves c to the tail (most recent) with activity time now.
func (l *idleList) touch(c *rconn, now time.Time) {
	c.lastActive = now
	l.remove(c)
	c.idlePrev = l.tail
	if l.tail != nil {
		l.tail.idleNext = c
	} else {
		l.head = c
	}
	l.tail = c
	c.inIdle = true
}

// remove takes c out of the list if it is in it.
func (l *idleList) remove(c *rconn) {
	if !c.inIdle {
		return
	}
	if c.idlePrev != nil {
		c.idlePrev.idleNext = c.idleNext
	} else {
		l.head = c.idleNext
	}
	if c.idleNext != nil {
		c.idleNext.idlePrev = c.idlePrev
	} else {
		l.tail = c.idlePrev
	}
	c.idlePrev, c.idleNext, c.inIdle = nil, nil, false
}

// oldest returns the least recently active connection, or nil.
func (l *idleList) oldest() *rconn { return l.head }
