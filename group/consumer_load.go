package group

import (
	"maps"
	"slices"
	"time"
)

// Loading consumer groups: the last record of each key wins and a
// tombstone removes its key, as for classic groups. A group's records
// are its epoch (type 3), each member's subscription (5), target
// assignment (7) and current assignment (8), the target's epoch (6),
// and the resolutions of its regular expressions (16). Members come back with their epochs and assignments and a fresh
// session timeout, so members that kept running carry on.

// cgLoad is a consumer group being loaded.
type cgLoad struct {
	s       *consumerState
	hasMeta bool // a live type-3 record
}

// replayConsumer applies one consumer group record; false if it cannot
// be read.
func (ld *loader) replayConsumer(key, value []byte) bool {
	k, err := readCGKey(key)
	if err != nil {
		return false
	}
	if ld.cgroups == nil {
		ld.cgroups = map[string]*cgLoad{}
	}
	g := ld.cgroups[k.group]
	if g == nil {
		g = &cgLoad{s: newConsumerState()}
		ld.cgroups[k.group] = g
	}
	if value == nil {
		g.tombstone(k)
		return true
	}
	return g.apply(k, value) == nil
}

func (g *cgLoad) tombstone(k cgRecordKey) {
	switch k.typ {
	case cgMetadataKey:
		g.hasMeta = false
		g.s = newConsumerState()
	case cgMemberKey:
		delete(g.s.members, k.memberID)
	case cgTargetMemberKey:
		delete(g.s.target, k.memberID)
	case cgRegexKey:
		delete(g.s.regexes, k.regex)
	case cgCurrentKey:
		if m := g.s.members[k.memberID]; m != nil {
			m.epoch, m.prevEpoch, m.state, m.assigned, m.revoking = 0, 0, memberStable, partSet{}, partSet{}
		}
	}
}

func (g *cgLoad) apply(k cgRecordKey, value []byte) error {
	var err error
	switch k.typ {
	case cgMetadataKey:
		g.hasMeta = true
		g.s.epoch, g.s.metadataHash, err = readCGMetadata(value)
	case cgTargetMetadataKey:
		g.s.assignmentEpoch, err = readCGEpoch(value)
	case cgRegexKey:
		var r *resolvedRegex
		if r, err = readCGRegex(value); err == nil {
			g.s.regexes[k.regex] = r
		}
	case cgTargetMemberKey:
		var ps partSet
		if ps, err = readCGTargetMember(value); err == nil {
			g.s.target[k.memberID] = ps
		}
	case cgMemberKey:
		var m *cmember
		if m, err = readCGMember(k.memberID, value); err == nil {
			if old := g.s.members[k.memberID]; old != nil {
				m.epoch, m.prevEpoch, m.state, m.assigned, m.revoking = old.epoch, old.prevEpoch, old.state, old.assigned, old.revoking
			} else {
				m.assigned, m.revoking = partSet{}, partSet{}
			}
			g.s.members[k.memberID] = m
		}
	case cgCurrentKey:
		m := g.s.members[k.memberID]
		if m == nil {
			m = &cmember{id: k.memberID}
			g.s.members[k.memberID] = m
		}
		err = readCGCurrent(m, value)
	}
	return err
}

// installConsumerGroups makes the loaded consumer groups live.
func (c *Coordinator) installConsumerGroups(ld *loader, now time.Time) {
	for _, id := range slices.Sorted(maps.Keys(ld.cgroups)) {
		cg := ld.cgroups[id]
		if !cg.hasMeta {
			continue
		}
		g := newGroup(id, time.Time{}, c.bounds)
		g.cons, g.protocolType = cg.s, consumerProtocolType
		g.syncConsumerState(now)
		c.groups[id] = g
		for _, mid := range cg.s.memberIDs() { // sorted: equal deadlines fire in a fixed order
			m := cg.s.members[mid]
			session := c.cfg.ConsumerSessionTimeout
			if m.classic != nil {
				session = time.Duration(m.classic.sessionTimeout) * time.Millisecond
			}
			c.timers.set(consumerSessionKey(id, mid), now.Add(session))
		}
	}
}
