package cluster

import (
	"errors"

	"github.com/varve/varve/segment"

	"github.com/varve/varve/metadata"
	"github.com/varve/varve/replica"
)

// reconcile brings the partitions found on disk at start and the
// metadata image together, in this order:
//
//  1. Topics whose deletion was recorded but not finished lose their
//     remaining partitions (a topic killed midway through DeleteTopics
//     never comes back).
//  2. A partition whose topic the image lacks (a lost or older metadata
//     file) is adopted rather than deleted, so that data is never
//     dropped because of metadata; so is a partition beyond its
//     topic's count.
//  3. Partitions the image names but the disk lacks (a crash midway
//     through CreateTopics or CreatePartitions, a directory lost) are
//     created, with a log line.
//  4. Producer ids are handed out above every id the partitions'
//     producer state knows (producerIDFloor): adopted partitions bring
//     producers the metadata file never gave out. (A cluster node
//     names the same floor in its registration instead:
//     logsProducerIDFloor.)
//
// No step holds a lock another step waits for: the image is read
// without one.
func (b *Broker) reconcile() error {
	b.meta.admin.Lock()
	defer b.meta.admin.Unlock()
	if err := b.finishDeletions(); err != nil {
		return err
	}
	if _, err := b.meta.change(b.adoptionRecords); err != nil {
		return err
	}
	if err := b.raiseProducerIDFloor(); err != nil {
		return err
	}
	var errs error
	for t := range b.meta.image().Topics() {
		for p := range t.Partitions {
			tp := partitionOf(t.Name, int32(p))
			if _, ok := b.parts.Partition(tp); ok {
				continue
			}
			if _, err := b.parts.CreatePartition(tp, replica.TopicID(t.ID)); err != nil && !errors.Is(err, replica.ErrPartitionExists) {
				b.log.Error("partition in the metadata missing from the log dirs, and creating it failed", "partition", tp, "err", err)
				errs = errors.Join(errs, err)
				continue
			}
			b.log.Warn("partition in the metadata was missing from the log dirs; created it empty", "partition", tp, "dir", b.parts.Dir(tp))
		}
	}
	return errs
}

// raiseProducerIDFloor: step 4 of reconcile.
func (b *Broker) raiseProducerIDFloor() error {
	floor, err := b.producerIDFloor()
	if err != nil {
		return err
	}
	raised, err := b.meta.raiseProducerIDFloor(floor)
	if raised {
		b.log.Info("producer ids raised above the partitions' producer state", "floor", floor)
	}
	return err
}

// finishDeletions deletes what remains of topics queued for deletion.
// REQUIRES b.meta.admin.
func (b *Broker) finishDeletions() error {
	pending := b.meta.pendingDeletions()
	if len(pending) == 0 {
		return nil
	}
	var done []metadata.TopicID
	for _, t := range pending {
		// Only the deleted id's partitions go, should the name have been
		// created again since.
		if err := b.deletePartitions(t.Name, t.ID); err != nil {
			b.log.Error("finishing a topic deletion", "topic", t.Name, "err", err)
			continue
		}
		b.log.Info("finished deleting a topic deleted before the last stop", "topic", t.Name)
		done = append(done, t.ID)
	}
	return b.meta.deleted(done)
}

// adoptionRecords describes the partitions on disk the image lacks.
func (b *Broker) adoptionRecords(cur *metadata.Image) ([]metadata.Record, error) {
	type found struct {
		id    metadata.TopicID
		count int32
	}
	disk := map[string]*found{}
	var order []string
	for _, p := range b.parts.Partitions() { // sorted by topic, partition
		f, ok := disk[p.TP.Topic]
		if !ok {
			f = &found{}
			disk[p.TP.Topic] = f
			order = append(order, p.TP.Topic)
		}
		if f.id == (metadata.TopicID{}) {
			f.id = metadata.TopicID(p.TopicID)
		}
		f.count = max(f.count, p.TP.Partition+1)
	}
	var recs []metadata.Record
	for _, name := range order {
		f := disk[name]
		t, ok := cur.Topic(name)
		if !ok {
			if _, taken := cur.TopicByID(f.id); taken || f.id == (metadata.TopicID{}) {
				f.id = newTopicID()
			}
			b.log.Warn("adopted partitions missing from the metadata", "topic", name, "partitions", f.count, "topic_id", f.id)
			recs = append(recs, b.meta.topicRecords(name, f.id, 0, f.count, nil)...)
			continue
		}
		if n := int32(len(t.Partitions)); f.count > n {
			b.log.Warn("adopted partitions beyond the topic's count", "topic", name, "from", n, "to", f.count)
			recs = append(recs, b.meta.topicRecords(name, t.ID, n, f.count, nil)...)
		}
	}
	return recs, nil
}

func partitionOf(topic string, p int32) segment.TopicPartition {
	return segment.TopicPartition{Topic: topic, Partition: p}
}
