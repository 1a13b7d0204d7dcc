package cluster

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/record"
)

// legacyFetchResponse answers Fetch v0-3 with the records down-converted
// to the message format those clients read: magic 0 for v0-1, magic 1
// for v2-3 (Kafka's FetchResponse down-conversion).
func legacyFetchResponse(version int16, topics []fetchTopic) vnet.Response {
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
				rp.RecordBatches, rp.ErrorCode = downConverted(fp, magic)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return bytesResponse(resp.AppendTo(nil))
}

func downConverted(fp fetchPart, magic int8) ([]byte, int16) {
	buf, err := fp.records.Bytes()
	if err != nil {
		return nil, errorCode(err)
	}
	out, err := record.DownConvert(buf, magic)
	if err != nil {
		return nil, kerr.CorruptMessage.Code
	}
	return out, fp.errorCode
}
