package controller

import (
	"fmt"
	"slices"

	"github.com/varve/varve/metadata"
)

// checkImage checks what every image the controller makes must hold
// (see the package documentation): a leader is in its ISR; every ISR
// member is a replica, named once; inactive brokers (fenced or in
// controlled shutdown) lead nothing and are in no ISR but as the last
// member of a partition without a leader (KIP-841). propose runs it on
// builds with invariants.Enabled; the property test on every event.
func checkImage(img *metadata.Image) error {
	for t := range img.Topics() {
		for i := range t.Partitions {
			if err := checkPartition(img, &t.Partitions[i]); err != nil {
				return fmt.Errorf("%s-%d: %w", t.Name, i, err)
			}
		}
	}
	return nil
}

func checkPartition(img *metadata.Image, p *metadata.Partition) error {
	inactive := func(id int32) bool {
		b, ok := img.Broker(id)
		return !ok || b.Fenced || b.InControlledShutdown
	}
	if p.Leader != metadata.NoLeader && (!slices.Contains(p.ISR, p.Leader) || inactive(p.Leader)) {
		return fmt.Errorf("leader %d outside ISR %v or inactive", p.Leader, p.ISR)
	}
	if hasDuplicates(p.ISR) || hasDuplicates(p.Replicas) {
		return fmt.Errorf("replicas %v or ISR %v name a broker twice", p.Replicas, p.ISR)
	}
	lastOfOffline := p.Leader == metadata.NoLeader && len(p.ISR) == 1
	for _, r := range p.ISR {
		if !slices.Contains(p.Replicas, r) {
			return fmt.Errorf("ISR member %d not among replicas %v", r, p.Replicas)
		}
		if inactive(r) && !lastOfOffline {
			return fmt.Errorf("inactive broker %d in ISR %v, leader %d", r, p.ISR, p.Leader)
		}
	}
	return nil
}
