package controller

import (
	"slices"

	"github.com/varve/varve/metadata"
)

// place chooses the replicas of n new partitions with replication factor
// rf, striped across racks then brokers in the manner of Kafka's
// StripedReplicaPlacer: the usable (active) brokers are listed one rack
// after another (the first broker of every rack, then the second of
// every rack, ...); a partition's leader is the next broker of that list
// and its followers the brokers after it, taking a rack not yet used by
// the partition while one remains. Leaders thus rotate over brokers and
// racks, and a partition spans min(rf, racks) racks. Kafka starts each
// placement at a random point of the list; here a cursor carries on
// from the last placement, which is as balanced and deterministic.
// Brokers without a rack count as one rack, as in Kafka.
func (c *Controller) place(n int32, rf int) [][]int32 {
	list := c.stripedBrokers()
	out := make([][]int32, 0, n)
	for range n {
		start := c.placeCursor % len(list)
		c.placeCursor++
		out = append(out, pickReplicas(list, start, rf))
	}
	return out
}

// usableBrokers counts the brokers new replicas may be placed on.
func (c *Controller) usableBrokers() int {
	n := 0
	for _, b := range c.img.Brokers() {
		if c.active(b.ID) {
			n++
		}
	}
	return n
}

// stripedBrokers lists the active brokers rack by rack: the first of each
// rack (racks in name order, brokers in id order), then the second, ...
func (c *Controller) stripedBrokers() []*metadata.Broker {
	byRack := map[string][]*metadata.Broker{}
	for _, b := range c.img.Brokers() {
		if c.active(b.ID) {
			byRack[b.Rack] = append(byRack[b.Rack], b)
		}
	}
	racks := make([]string, 0, len(byRack))
	for r := range byRack {
		racks = append(racks, r)
	}
	slices.Sort(racks)
	var list []*metadata.Broker
	for i, n := 0, c.usableBrokers(); len(list) < n; i++ {
		for _, r := range racks {
			if i < len(byRack[r]) {
				list = append(list, byRack[r][i])
			}
		}
	}
	return list
}

// pickReplicas takes rf brokers of list from start: first brokers on
// racks the partition does not use yet, then any.
func pickReplicas(list []*metadata.Broker, start, rf int) []int32 {
	chosen := []*metadata.Broker{list[start]}
	for pass := 0; pass < 2 && len(chosen) < rf; pass++ {
		for i := 1; i < len(list) && len(chosen) < rf; i++ {
			b := list[(start+i)%len(list)]
			if slices.Contains(chosen, b) || (pass == 0 && usesRack(chosen, b.Rack)) {
				continue
			}
			chosen = append(chosen, b)
		}
	}
	out := make([]int32, len(chosen))
	for i, b := range chosen {
		out[i] = b.ID
	}
	return out
}

func usesRack(bs []*metadata.Broker, rack string) bool {
	return slices.ContainsFunc(bs, func(b *metadata.Broker) bool { return b.Rack == rack })
}
