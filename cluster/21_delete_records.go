package cluster

// DeleteRecords, versions 0-2: raise a partition's log start offset (-1:
// to the high watermark); answers the new low watermark. Segments wholly
// below it are removed by the next retention pass, as in Kafka.

import (
	"cmp"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.DeleteRecords.Int16(), min: 0, max: 2, serve: serveDeleteRecords})
}

func serveDeleteRecords(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.DeleteRecordsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	del := b.topicCheck(r, acl.OpDelete)
	for _, rt := range req.Topics {
		st := kmsg.NewDeleteRecordsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition, sp.LowWatermark = rp.Partition, -1
			p, err := b.partition(rt.Topic, rp.Partition)
			err = cmp.Or(del.err(rt.Topic), err)
			if err == nil {
				sp.LowWatermark, err = p.DeleteRecordsBefore(rp.Offset)
			}
			sp.ErrorCode = errorCode(err)
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}
