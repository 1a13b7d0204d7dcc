package compaction

import "github.com/varve/varve/record"

// lastOfProducer reports whether h is the last data batch of an active
// producer (Kafka's isBatchLastRecordOfProducer over
// lastRecordsOfActiveProducers): such a batch stays, even emptied, so
// that the producer's sequence state survives compaction (invariant C8).
// The log's producer state (segment.Log.Producers, which forgets expired
// producers as Kafka's does) is read once per pass, the first time an
// emptied batch of a producer needs it.
func (p *pass) lastOfProducer(h record.BatchHeader) bool {
	if h.ProducerID < 0 {
		return false
	}
	if p.producers == nil {
		states := p.c.log.Producers()
		p.producers = make(map[int64]int64, len(states))
		for _, s := range states {
			p.producers[s.ProducerID] = s.LastOffset
		}
	}
	last, ok := p.producers[h.ProducerID]
	return ok && last == h.LastOffset()
}
