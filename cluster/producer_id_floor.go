package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/varve/varve/segment"
)

// producerIDFloor is one more than the highest producer id any of logs
// knows: in the producer state each log loaded, or in any .snapshot file
// beside its segments (a snapshot may name a producer whose state has
// since expired; a Kafka log directory adopted whole brings Kafka's
// snapshots). Producer ids handed out from then on start at or above
// it, so that a new idempotent producer never takes the id of one whose
// sequence numbers a partition still remembers: the partition would
// answer its first batches as duplicates and drop them.
//
// A snapshot that does not decode is told to skipped and left out: the
// log rebuilt its producer state from its segments instead.
func producerIDFloor(logs []*segment.Log, skipped func(path string, err error)) (int64, error) {
	var floor int64
	for _, l := range logs {
		for _, p := range l.Producers() {
			floor = max(floor, p.ProducerID+1)
		}
		f, err := snapshotProducerIDFloor(l.Dir(), skipped)
		if err != nil {
			return 0, err
		}
		floor = max(floor, f)
	}
	return floor, nil
}

// snapshotProducerIDFloor is one more than the highest producer id of
// the .snapshot files in dir.
func snapshotProducerIDFloor(dir string, skipped func(path string, err error)) (int64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("producer snapshots of %s: %w", dir, err)
	}
	var floor int64
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".snapshot") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			return 0, fmt.Errorf("producer snapshot %s: %w", path, err)
		}
		states, err := segment.DecodeProducerSnapshot(data)
		if err != nil {
			skipped(path, err)
			continue
		}
		for _, p := range states {
			floor = max(floor, p.ProducerID+1)
		}
	}
	return floor, nil
}

// producerIDFloor is producerIDFloor over the node's logs, with a
// warning for each snapshot left out.
func (b *Broker) producerIDFloor() (int64, error) {
	return producerIDFloor(b.parts.Logs(), func(path string, err error) {
		b.log.Warn("producer snapshot unreadable; its producer ids are not counted", "path", path, "err", err)
	})
}

// logsProducerIDFloor is the floor a cluster node names in its
// registration (quorum.LifecycleConfig.ProducerIDFloor): the controller
// raises the cluster's next producer id to it before the node is
// unfenced, so that producer ids handed out from then on, by any
// broker's new block, are above every id its partitions hold. A block
// another broker took before this node registered is still handed out
// to its end: the floor protects what comes after the registration, as
// the single node's does after its start. A floor that cannot be
// computed is logged and sent as none: the node still registers.
func (b *Broker) logsProducerIDFloor() int64 {
	floor, err := b.producerIDFloor()
	if err != nil {
		b.log.Error("producer-id floor of the logs not computed; registering without it", "err", err)
		return 0
	}
	return floor
}
