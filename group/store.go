package group

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// storeGroup writes g's metadata with the given assignment (nil for an
// Empty group) and returns the error code for the client (0 on success).
func (c *Coordinator) storeGroup(g *group, assignment map[string][]byte) int16 {
	err := c.append([]entry{{key: groupKey(g.id), value: groupValue(g, assignment)}})
	return appendCode(err, false)
}

// append writes entries as one batch.
func (c *Coordinator) append(entries []entry) error {
	batch, err := buildBatch(entries, c.now)
	if err != nil {
		return err
	}
	if err := c.log.Append(batch); err != nil {
		c.cfg.Logger.Warn("writing to __consumer_offsets failed", "partition", c.partition, "err", err)
		return err
	}
	return nil
}

// appendCode maps a failed append to what the client is told, as
// Kafka's GroupMetadataManager does for group (storeGroup) and offset
// (storeOffsets) writes: a missing partition or too few replicas means
// try the coordinator again later, a lost leadership or a failed disk
// means find the coordinator again, a timeout means rejoin, and a
// too-large write is the server's fault for group metadata and the
// client's for offsets. An error that carries no Kafka code is a
// storage failure.
func appendCode(err error, offsets bool) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return kerr.NotCoordinator.Code
	}
	switch ke {
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend:
		return kerr.CoordinatorNotAvailable.Code
	case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
		return kerr.NotCoordinator.Code
	case kerr.RequestTimedOut:
		if offsets {
			return kerr.RequestTimedOut.Code
		}
		return kerr.RebalanceInProgress.Code
	case kerr.MessageTooLarge, kerr.RecordListTooLarge, kerr.InvalidFetchSize:
		if offsets {
			return kerr.InvalidCommitOffsetSize.Code
		}
		return kerr.UnknownServerError.Code
	}
	return ke.Code
}
