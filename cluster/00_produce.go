package cluster

// Produce, versions 0-12.
//
// Versions 0-2 carry the old message formats (magic 0 and 1): they are
// up-converted to one v2 batch per partition on the way in, as Kafka 3.x
// does, because Debian's kcat (librdkafka 2.0) compresses only against a
// broker that lists Produce v0. Versions 3+ must carry v2 batches, whose
// every record is validated as Kafka's LogValidator does
// (produce_validate.go) before they are stored verbatim (codec kept).
//
// acks=0 sends no response (an error closes the connection, as Kafka's
// CloseConnectionResponse); acks=1 answers after the leader's append;
// acks=all answers once the high watermark of every partition appended
// to has passed the last offset appended (replica.DelayedProduce, parked
// in the broker's purgatory until then or until the request's timeout:
// REQUEST_TIMED_OUT), which with one replica is at once. acks=all with
// an ISR smaller than min.insync.replicas gets NOT_ENOUGH_REPLICAS and
// writes nothing; one whose ISR shrank below it before the high
// watermark got there gets NOT_ENOUGH_REPLICAS_AFTER_APPEND. A broker
// that does not lead a partition answers NOT_LEADER_OR_FOLLOWER with, from
// v10, the leader it knows and its endpoint (KIP-951).
// message.timestamp.type=LogAppendTime stamps each batch with the
// broker's clock.
//
// Transactional batches are verified against the producer's ongoing
// transaction (KIP-890 part 1, txn_verify.go): one outside it is
// TRANSACTION_ABORTABLE from v11, INVALID_TXN_STATE before. From v12, on
// a cluster at transaction.version 2, their partition is added to it
// instead (KIP-890 part 2, txn_add.go).
//
// Not served: recompression for a topic whose compression.type is not "producer"
// (batches are stored as sent).

import (
	"cmp"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/record"
	"github.com/varve/varve/replica"
)

func init() {
	register(&api{key: kmsg.Produce.Int16(), min: 0, max: 12, serve: serveProduce})
}

func serveProduce(b *Broker, r *vnet.Request, kreq kmsg.Request, respond func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.ProduceRequest)
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	resp.ThrottleMillis, respond = b.produceQuota(r, req, respond) // KIP-13, KIP-219
	failed, gate := false, b.newProduceGate(r, req)
	var acks []replica.ProducePartition // acks=all: appended, waiting for the high watermark
	var where [][2]int                  // each one's topic and partition in resp
	txnErr, write := b.produceTransactionError(r, req), b.topicCheck(r, acl.OpWrite)
	for ti, rt := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			n := len(acks)
			var sp kmsg.ProduceResponseTopicPartition
			if err := cmp.Or(txnErr, write.err(rt.Topic)); err != nil {
				sp = produceRefused(rp.Partition, err)
			} else {
				sp = b.producePartition(gate, r.Version, req.Acks, rt.Topic, rp, &acks)
			}
			if len(acks) > n {
				where = append(where, [2]int{ti, len(st.Partitions)})
			}
			failed = failed || sp.ErrorCode != 0
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if req.Acks == 0 {
		if failed {
			respond(vnet.Response{Close: true})
		} else {
			respond(vnet.Response{NoResponse: true})
		}
		return nil
	}
	if !acknowledged(acks) {
		b.parkProduce(r.Version, req.TimeoutMillis, resp, acks, where, respond)
		return nil
	}
	b.addCurrentLeaders(r.Version, resp)
	return resp
}

// acknowledged reports whether every partition's acks=all is settled
// without error already (at once with one replica): the high watermark
// passed its last appended offset with enough replicas in sync.
func acknowledged(acks []replica.ProducePartition) bool {
	for _, a := range acks {
		if done, err := a.Partition.ProduceStatus(a.RequiredOffset); !done || err != nil {
			return false
		}
	}
	return true
}

// parkProduce waits, in the purgatory, for the high watermark to pass
// the appended records, then answers with each partition's outcome.
func (b *Broker) parkProduce(version int16, timeoutMs int32, resp *kmsg.ProduceResponse, acks []replica.ProducePartition, where [][2]int, respond func(vnet.Response)) {
	d := replica.NewDelayedProduce(acks, b.hosted, func(parts []replica.ProducePartition) {
		for i, pp := range parts {
			if pp.Err != nil {
				resp.Topics[where[i][0]].Partitions[where[i][1]].ErrorCode = errorCode(pp.Err)
			}
		}
		b.addCurrentLeaders(version, resp)
		resp.SetVersion(version)
		respond(bytesResponse(resp.AppendTo(nil)))
	})
	b.purgatory.Watch(d, time.Duration(timeoutMs)*time.Millisecond, d.Keys()...)
}

// producePartition appends one partition's records; with acks=all it
// adds the partition and the offset to wait for to waits.
func (b *Broker) producePartition(gate produceGate, version, acks int16, topic string, rp kmsg.ProduceRequestTopicPartition, waits *[]replica.ProducePartition) kmsg.ProduceResponseTopicPartition {
	sp := kmsg.NewProduceResponseTopicPartition()
	sp.Partition = rp.Partition
	sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = -1, -1, -1
	if acks != 0 && acks != 1 && acks != -1 {
		sp.ErrorCode = kerr.InvalidRequiredAcks.Code
		return sp
	}
	part, err := b.partition(topic, rp.Partition)
	if err != nil {
		sp.ErrorCode = errorCode(err)
		return sp
	}
	tc := b.topicConfig(topic)
	records, err := produceRecords(version, rp.Records)
	if err != nil {
		sp.ErrorCode = errorCode(err)
		return sp
	}
	if !b.checkProduced(gate, topic, tc, records, &sp) {
		return sp
	}
	if tc.MessageTimestampType() == record.TimestampLogAppendTime {
		now := time.Now().UnixMilli()
		stampLogAppendTime(records, now)
		sp.LogAppendTime = now
	}
	info, err := part.AppendRecordsToLeader(records, acks, tc.MinInsyncReplicas())
	if err != nil {
		sp.ErrorCode = errorCode(err)
		b.log.Debug("produce failed", "topic", topic, "partition", rp.Partition, "err", err)
		return sp
	}
	b.metrics.produced(topic, len(records), info.LastOffset-info.FirstOffset+1)
	sp.BaseOffset, sp.LogStartOffset = info.FirstOffset, part.StartOffset()
	if acks == -1 {
		*waits = append(*waits, replica.ProducePartition{Partition: part, RequiredOffset: info.LastOffset + 1})
	}
	return sp
}

// produceRecords returns the v2 batches of a partition's produce data,
// up-converting the magic 0 and 1 message sets of Produce v0-2.
func produceRecords(version int16, records []byte) ([]byte, error) {
	if len(records) == 0 {
		return nil, kerr.CorruptMessage
	}
	const magicPos = 16
	if len(records) <= magicPos {
		return nil, kerr.CorruptMessage
	}
	if magic := records[magicPos]; magic < 2 {
		if version >= 3 {
			return nil, kerr.UnsupportedForMessageFormat
		}
		return record.UpConvertLegacy(records)
	}
	if version < 3 {
		return nil, kerr.UnsupportedForMessageFormat
	}
	return records, nil
}

// stampLogAppendTime sets every batch's timestamp type to LogAppendTime
// and its max timestamp to now (recomputing the CRC).
func stampLogAppendTime(records []byte, now int64) {
	for p := 0; p < len(records); {
		_, n, err := record.NextBatch(records[p:], len(records)-p)
		if err != nil {
			return // validation at append reports it
		}
		record.SetMaxTimestampLogAppendTime(records[p:p+n], now)
		p += n
	}
}
