package cluster

import (
	"github.com/twmb/franz-go/pkg/kbin"

	vnet "github.com/varve/varve/net"
)

// encodeFetchResponse writes a FetchResponse body (KIP-482 flexible from
// v12) field for field as Kafka's FetchResponse.json lays it out, with
// each partition's records as a file region between byte parts, so that
// they reach the socket through sendfile. fetch_encode_test.go checks it
// byte for byte against kmsg's encoder at every version served.
func encodeFetchResponse(version int16, topics []fetchTopic) []vnet.Part {
	flexible := version >= 12
	var parts []vnet.Part
	buf := make([]byte, 0, 256)
	buf = kbin.AppendInt32(buf, 0) // ThrottleMillis (v1+)
	if version >= 7 {
		buf = kbin.AppendInt16(buf, 0) // ErrorCode
		buf = kbin.AppendInt32(buf, 0) // SessionID: no session (KIP-227)
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
				buf = kbin.AppendUvarint(buf, 0) // partition tagged fields
			}
		}
		if flexible {
			buf = kbin.AppendUvarint(buf, 0) // topic tagged fields
		}
	}
	if flexible {
		buf = kbin.AppendUvarint(buf, 0) // response tagged fields
	}
	return append(parts, vnet.Part{Bytes: buf})
}

func appendFetchPartitionHead(buf []byte, version int16, fp *fetchPart) []byte {
	buf = kbin.AppendInt32(buf, fp.partition)
	buf = kbin.AppendInt16(buf, fp.errorCode)
	buf = kbin.AppendInt64(buf, fp.hw)
	if version >= 4 {
		buf = kbin.AppendInt64(buf, fp.hw) // LastStableOffset: no transactions
	}
	if version >= 5 {
		buf = kbin.AppendInt64(buf, fp.logStart)
	}
	if version >= 4 { // AbortedTransactions: null
		if version >= 12 {
			buf = kbin.AppendUvarint(buf, 0)
		} else {
			buf = kbin.AppendInt32(buf, -1)
		}
	}
	if version >= 11 {
		buf = kbin.AppendInt32(buf, -1) // PreferredReadReplica
	}
	return buf
}

func appendArrayLen(buf []byte, n int, flexible bool) []byte {
	if flexible {
		return kbin.AppendCompactArrayLen(buf, n)
	}
	return kbin.AppendArrayLen(buf, n)
}
