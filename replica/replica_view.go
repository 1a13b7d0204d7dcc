package replica

import "slices"

// ReplicaView is what a leader knows of one in-sync follower, for
// choosing a consumer's preferred read replica (KIP-392, Kafka's
// ReplicaView): its log end as of its last fetch and when it last
// caught up.
type ReplicaView struct {
	ID             int32
	LogEnd         int64
	LastCaughtUpMs int64
}

// InSyncFollowers lists the followers in the ISR with their fetch
// state, in broker id order; none unless this replica leads a
// replicated partition.
func (p *Partition) InSyncFollowers() []ReplicaView {
	p.st.Lock()
	defer p.st.Unlock()
	r := p.st.repl
	if r == nil || r.role != RoleLeader {
		return nil
	}
	var out []ReplicaView
	for id, f := range r.followers {
		if slices.Contains(r.isr, id) && f.logEnd >= 0 {
			out = append(out, ReplicaView{ID: id, LogEnd: f.logEnd, LastCaughtUpMs: f.lastCaughtUpMs})
		}
	}
	slices.SortFunc(out, func(a, b ReplicaView) int { return int(a.ID - b.ID) })
	return out
}

// NowMs is the partition's clock (the manager's), in milliseconds.
func (p *Partition) NowMs() int64 { return p.now() }

// InISR reports whether replica id is in the ISR of the partition this
// replica leads.
func (p *Partition) InISR(id int32) bool {
	p.st.Lock()
	defer p.st.Unlock()
	r := p.st.repl
	return r != nil && r.role == RoleLeader && slices.Contains(r.isr, id)
}
