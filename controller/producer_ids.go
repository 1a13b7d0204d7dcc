package controller

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/varve/varve/metadata"
)

// AllocateProducerIds (api key 67, KIP-730): a broker takes the next
// block of ProducerIDBlockSize producer ids. The ProducerIdsRecord moves
// the cluster's next producer id past the block, so no id is handed out
// twice, whichever broker asks and whichever controller answers.

// ProducerIDBlock is the answer: ids Start..Start+Len-1 are the broker's.
type ProducerIDBlock struct {
	Records []metadata.Record
	Err     error
	Start   int64
	Len     int32
}

// AllocateProducerIds hands broker id (at epoch) the next block. Errors:
// STALE_BROKER_EPOCH for an unknown broker or another epoch (Kafka:
// ClusterControlManager.checkBrokerEpoch), UNKNOWN_SERVER_ERROR when the
// ids are used up.
func (c *Controller) AllocateProducerIds(id int32, epoch int64) (ProducerIDBlock, error) {
	if b, ok := c.img.Broker(id); !ok || b.Epoch != epoch {
		return ProducerIDBlock{Err: kerr.StaleBrokerEpoch}, nil
	}
	start := c.img.ProducerIDs().NextProducerID
	if start > math.MaxInt64-ProducerIDBlockSize {
		return ProducerIDBlock{Err: kerr.UnknownServerError}, nil
	}
	rec := metadata.ProducerIdsRecord{BrokerID: id, BrokerEpoch: epoch, NextProducerID: start + ProducerIDBlockSize}
	if err := c.propose([]metadata.Record{rec}); err != nil {
		return ProducerIDBlock{}, err
	}
	return ProducerIDBlock{Records: []metadata.Record{rec}, Start: start, Len: ProducerIDBlockSize}, nil
}
