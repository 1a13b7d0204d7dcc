package cluster

import (
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
)

// encodeFetchResponse writes a FetchResponse body (KIP-482 flexible from
// v12) field for field as Kafka's FetchResponse.json lays it out, with
// each partition's records as a file region between byte parts, so that
// they reach the socket through sendfile. fetch_encode_test.go checks it
// byte for byte against kmsg's encoder at every version served.
// fetchHead is a response's top-level error and session id (v7+).
type fetchHead struct {
	errorCode int16
	sessionID int32
}

func encodeFetchResponse(version int16, head fetchHead, topics []fetchTopic, brokers []kmsg.FetchResponseBroker) []vnet.Part {
	flexible := version >= 12
	var parts []vnet.Part
	buf := make([]byte, 0, 256)
	buf = kbin.AppendInt32(buf, 0) // ThrottleMillis (v1+)
	if version >= 7 {
		buf = kbin.AppendInt16(buf, head.errorCode)
		buf = kbin.AppendInt32(buf, head.sessionID) // KIP-227
	}
	buf = appendArrayLen(buf, len(topics), flexible)
	for _, t := range topics {
		if version >= 13 {
			buf = kbin.AppendUuid(buf, t.id)
		} else if flexible {
			buf = kbin.AppendCompactString(buf, t.name)
		} else {
			buf = kbin.AppendString(buf, t.name)
		}
		buf = appendArrayLen(buf, len(t.parts), flexible)
		for i := range t.parts {
			fp := &t.parts[i]
			buf = appendFetchPartitionHead(buf, version, fp)
			n := fp.records.Len
			if flexible {
				buf = kbin.AppendUvarint(buf, uint32(n+1))
			} else {
				buf = kbin.AppendInt32(buf, int32(n))
			}
			if n > 0 {
				region := fp.records
				parts = append(parts, vnet.Part{Bytes: buf}, vnet.Part{Region: &region})
				buf = make([]byte, 0, 128)
			}
			if flexible {
				buf = appendFetchPartitionTags(buf, fp)
			}
		}
		if flexible {
			buf = kbin.AppendUvarint(buf, 0) // topic tagged fields
		}
	}
	if flexible {
		buf = appendFetchResponseTags(buf, version, brokers)
	}
	return append(parts, vnet.Part{Bytes: buf})
}

// appendFetchPartitionTags writes a partition's tagged fields (v12+):
// tag 0 DivergingEpoch {Epoch int32, EndOffset int64} (KIP-595), tag 1
// CurrentLeader {LeaderId int32, LeaderEpoch int32} (KIP-951), each a
// struct ending in its own empty tag section, in tag order.
func appendFetchPartitionTags(buf []byte, fp *fetchPart) []byte {
	n := 0
	if fp.diverging != nil {
		n++
	}
	if fp.currentLeader != nil {
		n++
	}
	buf = kbin.AppendUvarint(buf, uint32(n))
	if fp.diverging != nil {
		buf = kbin.AppendUvarint(buf, 0)
		buf = kbin.AppendUvarint(buf, 4+8+1)
		buf = kbin.AppendInt32(buf, fp.diverging.Epoch)
		buf = kbin.AppendInt64(buf, fp.diverging.EndOffset)
		buf = kbin.AppendUvarint(buf, 0)
	}
	if fp.currentLeader != nil {
		buf = kbin.AppendUvarint(buf, 1)
		buf = kbin.AppendUvarint(buf, 4+4+1)
		buf = kbin.AppendInt32(buf, fp.currentLeader[0])
		buf = kbin.AppendInt32(buf, fp.currentLeader[1])
		buf = kbin.AppendUvarint(buf, 0)
	}
	return buf
}

// appendFetchResponseTags writes the response's tagged fields: tag 0
// NodeEndpoints (v16+, KIP-951): [NodeId int32, Host compact string,
// Port int32, Rack compact nullable string, tags].
func appendFetchResponseTags(buf []byte, version int16, brokers []kmsg.FetchResponseBroker) []byte {
	if version < 16 || len(brokers) == 0 {
		return kbin.AppendUvarint(buf, 0)
	}
	var body []byte
	body = kbin.AppendCompactArrayLen(body, len(brokers))
	for _, br := range brokers {
		body = kbin.AppendInt32(body, br.NodeID)
		body = kbin.AppendCompactString(body, br.Host)
		body = kbin.AppendInt32(body, br.Port)
		body = kbin.AppendCompactNullableString(body, br.Rack)
		body = kbin.AppendUvarint(body, 0)
	}
	buf = kbin.AppendUvarint(buf, 1)
	buf = kbin.AppendUvarint(buf, 0)
	buf = kbin.AppendUvarint(buf, uint32(len(body)))
	return append(buf, body...)
}

func appendFetchPartitionHead(buf []byte, version int16, fp *fetchPart) []byte {
	buf = kbin.AppendInt32(buf, fp.partition)
	buf = kbin.AppendInt16(buf, fp.errorCode)
	buf = kbin.AppendInt64(buf, fp.hw)
	if version >= 4 {
		lso := fp.lso
		if !fp.hasLSO || fp.hw < 0 {
			lso = fp.hw
		}
		buf = kbin.AppendInt64(buf, lso)
	}
	if version >= 5 {
		buf = kbin.AppendInt64(buf, fp.logStart)
	}
	if version >= 4 {
		buf = appendAbortedTxns(buf, version >= 12, fp)
	}
	if version >= 11 {
		buf = kbin.AppendInt32(buf, fp.preferredReadReplica()) // KIP-392
	}
	return buf
}

func appendArrayLen(buf []byte, n int, flexible bool) []byte {
	if flexible {
		return kbin.AppendCompactArrayLen(buf, n)
	}
	return kbin.AppendArrayLen(buf, n)
}

// appendAbortedTxns encodes AbortedTransactions: null unless the fetch is
// read_committed, else each aborted transaction's producer id and first
// offset (with empty tagged fields from v12).
func appendAbortedTxns(buf []byte, flexible bool, fp *fetchPart) []byte {
	if !fp.committed {
		if flexible {
			return kbin.AppendUvarint(buf, 0)
		}
		return kbin.AppendInt32(buf, -1)
	}
	buf = appendArrayLen(buf, len(fp.aborted), flexible)
	for _, a := range fp.aborted {
		buf = kbin.AppendInt64(buf, a.ProducerID)
		buf = kbin.AppendInt64(buf, a.FirstOffset)
		if flexible {
			buf = kbin.AppendUvarint(buf, 0)
		}
	}
	return buf
}
