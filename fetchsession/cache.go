package fetchsession

import "math/rand/v2"

// Config holds the cache's settings, Kafka's broker properties.
type Config struct {
	Slots      int   // max.incremental.fetch.session.cache.slots, 1000
	EvictionMs int64 // min.incremental.fetch.session.eviction.ms, 120000
	// NewID draws a candidate session id (any int32: ids not positive
	// or in use are drawn again); nil draws at random.
	NewID func() int32
}

// Cache is the broker's fetch session cache (Kafka's FetchSessionCache).
type Cache struct {
	cfg       Config
	sessions  map[int32]*session
	evictions int64
}

// NewCache returns an empty cache. A cache of 0 slots never creates a
// session: every fetch is then a full one.
func NewCache(cfg Config) *Cache {
	if cfg.NewID == nil {
		cfg.NewID = func() int32 { return rand.Int32() }
	}
	return &Cache{cfg: cfg, sessions: map[int32]*session{}}
}

// Len is the number of sessions cached.
func (c *Cache) Len() int { return len(c.sessions) }

// Partitions is the number of partitions over every cached session.
func (c *Cache) Partitions() int {
	n := 0
	for _, s := range c.sessions {
		n += s.size()
	}
	return n
}

// Evictions is the number of sessions evicted so far.
func (c *Cache) Evictions() int64 { return c.evictions }

// Remove drops session id; it reports whether there was one.
func (c *Cache) Remove(id int32) bool {
	_, ok := c.sessions[id]
	delete(c.sessions, id)
	return ok
}

// newID draws an unused positive session id (Kafka's newSessionId).
func (c *Cache) newID() int32 {
	for {
		id := c.cfg.NewID()
		if _, used := c.sessions[id]; id > 0 && !used {
			return id
		}
	}
}

// maybeCreate creates a session for a full fetch's partitions when a
// slot is free or one can be evicted, and returns its id, or
// InvalidSessionID (Kafka's maybeCreateSession).
func (c *Cache) maybeCreate(nowMs int64, privileged, usesTopicIDs bool, parts []*cached) int32 {
	if len(c.sessions) >= c.cfg.Slots && !c.tryEvict(privileged, len(parts), nowMs) {
		return InvalidSessionID
	}
	s := newSession(c.newID(), privileged, usesTopicIDs, nowMs)
	for _, p := range parts {
		s.add(p)
	}
	c.sessions[s.id] = s
	c.touch(s, nowMs)
	return s.id
}

// touch marks s used at nowMs and decides which evictions may take it:
// any new session once it is older than the eviction time, and a
// privileged one's at once when s is not privileged (Kafka's touch).
func (c *Cache) touch(s *session, nowMs int64) {
	s.lastUsedMs = nowMs
	old := nowMs-s.creationMs > c.cfg.EvictionMs
	s.evictableByAll = old
	s.evictableByPrivileged = !s.privileged || old
}

// tryEvict makes room for a new session of size partitions (Kafka's
// tryEvict): the least recently used session goes if it is stale;
// otherwise the least valuable evictable one goes if the new session is
// worth at least as much.
func (c *Cache) tryEvict(privileged bool, size int, nowMs int64) bool {
	lru := c.leastRecentlyUsed()
	if lru == nil {
		return false
	}
	if nowMs-lru.lastUsedMs > c.cfg.EvictionMs {
		c.evict(lru)
		return true
	}
	victim := c.leastValuable(privileged)
	if victim == nil || compareValue(privileged, size, 0, victim) < 0 {
		return false
	}
	c.evict(victim)
	return true
}

func (c *Cache) evict(s *session) {
	delete(c.sessions, s.id)
	c.evictions++
}

// leastRecentlyUsed orders by last use, then id (Kafka's LastUsedKey).
func (c *Cache) leastRecentlyUsed() *session {
	var best *session
	for _, s := range c.sessions {
		if best == nil || s.lastUsedMs < best.lastUsedMs || s.lastUsedMs == best.lastUsedMs && s.id < best.id {
			best = s
		}
	}
	return best
}

// leastValuable is the first session, in Kafka's EvictableKey order,
// that a new session (privileged or not) may evict. The cache holds at
// most Slots sessions, so a scan costs as much as Kafka's tree upkeep.
func (c *Cache) leastValuable(privileged bool) *session {
	var best *session
	for _, s := range c.sessions {
		if privileged && !s.evictableByPrivileged || !privileged && !s.evictableByAll {
			continue
		}
		if best == nil || compareValue(s.privileged, s.size(), s.id, best) < 0 {
			best = s
		}
	}
	return best
}

// compareValue orders (privileged, size, id) against s: unprivileged
// before privileged, then fewer partitions, then lower id (Kafka's
// EvictableKey.compareTo).
func compareValue(privileged bool, size int, id int32, s *session) int {
	switch {
	case privileged != s.privileged:
		if !privileged {
			return -1
		}
		return 1
	case size != s.size():
		if size < s.size() {
			return -1
		}
		return 1
	case id != s.id:
		if id < s.id {
			return -1
		}
		return 1
	}
	return 0
}
