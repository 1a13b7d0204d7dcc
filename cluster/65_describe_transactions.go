package cluster

// DescribeTransactions, version 0 (KIP-664).
//
// Each transactional id is described by its coordinator's state (package
// txn): NOT_COORDINATOR if its __transaction_state partition is not led
// here, COORDINATOR_LOAD_IN_PROGRESS while it loads,
// TRANSACTIONAL_ID_NOT_FOUND if unknown. Authorization, as Kafka's
// KafkaApis: Describe on the TransactionalId
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED); of its partitions only those
// of topics the principal may describe are listed.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/txn"
)

func init() {
	register(&api{key: kmsg.DescribeTransactions.Int16(), min: 0, max: 0, serve: serveDescribeTransactions})
}

func serveDescribeTransactions(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.DescribeTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	for _, id := range req.TransactionalIDs {
		st := kmsg.NewDescribeTransactionsResponseTransactionState()
		if code := b.txnIDRefusal(r, acl.OpDescribe, id); code != 0 {
			st.TransactionalID, st.ErrorCode = id, code
			resp.TransactionStates = append(resp.TransactionStates, st)
			continue
		}
		var d txn.Description
		b.txns.do(id, func(c *txn.Coordinator) { d = c.Describe(id) })
		st.TransactionalID, st.ErrorCode = id, d.Code
		st.State, st.TimeoutMillis, st.StartTimestamp = d.State.String(), d.TimeoutMs, d.StartTimestamp
		st.ProducerID, st.ProducerEpoch = d.ProducerID, d.Epoch
		if d.Code != 0 {
			st.State = ""
		}
		for _, tp := range d.Partitions {
			n := len(st.Topics)
			if n == 0 || st.Topics[n-1].Topic != tp.Topic {
				t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
				t.Topic = tp.Topic
				st.Topics = append(st.Topics, t)
				n++
			}
			st.Topics[n-1].Partitions = append(st.Topics[n-1].Partitions, tp.Partition)
		}
		st.Topics = b.describableTopics(r, st.Topics)
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return resp
}
