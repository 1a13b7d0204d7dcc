package cluster

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/record"
)

// legacyDownConvertBudget bounds the memory one Fetch v0-3 request may
// make the broker hold while down-converting: the converted records of all
// its partitions, and the decompressed records of the batch being
// converted, come out of it. A partition gets at most its
// partition_max_bytes of converted messages, as Kafka's
// LazyDownConversionRecords does, and once the budget is spent the
// remaining partitions answer with no records (the client fetches them
// again).
const legacyDownConvertBudget = 32 << 20

// legacyFetchResponse answers Fetch v0-3 with the records down-converted
// to the message format those clients read: magic 0 for v0-1, magic 1
// for v2-3 (Kafka's FetchResponse down-conversion).
func legacyFetchResponse(version int16, topics []fetchTopic) vnet.Response {
	budget := legacyDownConvertBudget
	magic := int8(1)
	if version < 2 {
		magic = 0
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(version)
	for _, t := range topics {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = t.name
		for _, fp := range t.parts {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.HighWatermark = fp.partition, fp.errorCode, fp.hw
			if fp.records.Len > 0 {
				rp.RecordBatches, rp.ErrorCode = downConverted(fp, magic, &budget)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return bytesResponse(resp.AppendTo(nil))
}

// downConverted converts one partition's records within its
// partition_max_bytes and what is left of the request's budget, which it
// charges for the output.
func downConverted(fp fetchPart, magic int8, budget *int) ([]byte, int16) {
	if *budget <= 0 {
		return nil, fp.errorCode
	}
	buf, err := fp.records.Bytes()
	if err != nil {
		return nil, errorCode(err)
	}
	limit := min(max(int(fp.partitionBytes), 1), *budget)
	out, err := record.DownConvertLimited(buf, magic, limit, *budget)
	if err != nil {
		return nil, kerr.CorruptMessage.Code
	}
	*budget -= len(out)
	return out, fp.errorCode
}
