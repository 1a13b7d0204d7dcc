package cluster

// Fetch, versions 0-17.
//
// Record data leaves as file regions (sendfile): the response is encoded
// by hand around them (fetch_encode.go), so the records never pass
// through user space. A fetch that has less than min.bytes waits, up to
// max.wait.ms, for an append to any of its partitions (the delayed fetch:
// a goroutine per waiting request, woken by the partitions' append
// notifications, instead of Kafka's timing wheel). Limits: each
// partition's PartitionMaxBytes and the response's MaxBytes; the first
// partition with data returns at least one whole batch (KIP-74). Reads
// stop at the high watermark; the last stable offset equals it (no
// transactions). Topic ids replace names from v13.
//
// Versions 0-3 predate v2 batches: their records are down-converted to
// magic 0 (v0-1) or magic 1 (v2-3) message sets (fetch_legacy.go), which
// costs a copy, as it does in Kafka.
//
// Not served: fetch sessions (KIP-227: the session id answered is 0, so
// clients send full fetches, which Kafka allows); follower fetches
// (replication comes later); preferred read replicas (-1).

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/pagecache"
	"github.com/varve/varve/replica"
)

func init() {
	register(&api{key: kmsg.Fetch.Int16(), min: 0, max: 17, serve: serveFetch})
}

// fetchPart is one partition's share of a fetch response.
type fetchPart struct {
	partition      int32
	errorCode      int16
	hw, logStart   int64
	records        pagecache.Region
	part           *replica.Partition
	offset         int64
	partitionBytes int32
}

type fetchTopic struct {
	name  string
	id    [16]byte
	parts []fetchPart
}

func serveFetch(b *Broker, r *vnet.Request, kreq kmsg.Request, respond func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.FetchRequest)
	topics := b.resolveFetch(r.Version, req)
	// Take the wake-up channels before reading: an append between the read
	// and the wait then closes a channel this fetch holds, and it cannot
	// sleep through it.
	wake := fetchWaits(topics)
	bytes, failed := b.readFetch(topics, req.MaxBytes)
	if req.MaxWaitMillis <= 0 || bytes >= int64(req.MinBytes) || failed {
		respond(b.fetchResponse(r.Version, topics))
		return nil
	}
	go b.delayedFetch(r.Version, req, topics, wake, respond)
	return nil
}

// fetchWaits returns the append notifications of a fetch's partitions.
func fetchWaits(topics []fetchTopic) []<-chan struct{} {
	var out []<-chan struct{}
	for _, t := range topics {
		for _, fp := range t.parts {
			if fp.part != nil {
				out = append(out, fp.part.Wait())
			}
		}
	}
	return out
}

// resolveFetch finds the partitions a fetch names.
func (b *Broker) resolveFetch(version int16, req *kmsg.FetchRequest) []fetchTopic {
	topics := make([]fetchTopic, 0, len(req.Topics))
	for _, rt := range req.Topics {
		ft := fetchTopic{name: rt.Topic, id: rt.TopicID}
		known := true
		if version >= 13 {
			t, ok := b.meta.image().TopicByID(rt.TopicID)
			if known = ok; ok {
				ft.name = t.Name
			}
		}
		for _, rp := range rt.Partitions {
			fp := fetchPart{partition: rp.Partition, hw: -1, logStart: -1, offset: rp.FetchOffset, partitionBytes: rp.PartitionMaxBytes}
			switch {
			case !known:
				fp.errorCode = kerr.UnknownTopicID.Code
			default:
				p, err := b.partition(ft.name, rp.Partition)
				fp.part, fp.errorCode = p, errorCode(err)
			}
			ft.parts = append(ft.parts, fp)
		}
		topics = append(topics, ft)
	}
	return topics
}

// readFetch reads every partition within the response budget and says
// how many bytes it found and whether any partition failed.
func (b *Broker) readFetch(topics []fetchTopic, maxBytes int32) (int64, bool) {
	budget := int64(maxBytes)
	if budget <= 0 {
		budget = 1 << 62
	}
	var total int64
	failed := false
	for ti := range topics {
		for pi := range topics[ti].parts {
			fp := &topics[ti].parts[pi]
			if fp.part == nil {
				failed = failed || fp.errorCode != 0
				continue
			}
			fp.hw, fp.logStart = fp.part.HighWatermark(), fp.part.StartOffset()
			limit := min(int64(fp.partitionBytes), budget)
			region, err := fp.part.Read(fp.offset, int(max(limit, 0)), total == 0)
			fp.errorCode, fp.records = errorCode(err), region
			failed = failed || err != nil
			total += region.Len
			budget -= region.Len
		}
	}
	return total, failed
}

// delayedFetch waits until enough data arrived, max.wait.ms passed, or
// the broker stops, then answers.
func (b *Broker) delayedFetch(version int16, req *kmsg.FetchRequest, topics []fetchTopic, waits []<-chan struct{}, respond func(vnet.Response)) {
	deadline := time.NewTimer(time.Duration(req.MaxWaitMillis) * time.Millisecond)
	defer deadline.Stop()
	for {
		wake := make(chan struct{}, 1)
		stop := make(chan struct{})
		for _, c := range waits {
			go func(c <-chan struct{}) {
				select {
				case <-c:
					select {
					case wake <- struct{}{}:
					default:
					}
				case <-stop:
				}
			}(c)
		}
		select {
		case <-wake:
			close(stop)
			waits = fetchWaits(topics) // before the re-read, as in serveFetch
			bytes, failed := b.readFetch(topics, req.MaxBytes)
			if bytes >= int64(req.MinBytes) || failed {
				respond(b.fetchResponse(version, topics))
				return
			}
		case <-deadline.C:
			close(stop)
			b.readFetch(topics, req.MaxBytes)
			respond(b.fetchResponse(version, topics))
			return
		case <-b.stopping:
			close(stop)
			respond(b.fetchResponse(version, topics))
			return
		}
	}
}

func (b *Broker) fetchResponse(version int16, topics []fetchTopic) vnet.Response {
	for _, t := range topics {
		for _, fp := range t.parts {
			if fp.records.Len > 0 {
				b.metrics.fetched(t.name, fp.records.Len)
			}
		}
	}
	if version < 4 {
		return legacyFetchResponse(version, topics)
	}
	return vnet.Response{Parts: encodeFetchResponse(version, topics)}
}
