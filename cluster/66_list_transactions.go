package cluster

// ListTransactions, versions 0-2 (KIP-664; v1 the duration filter,
// KIP-994; v2 the transactional id pattern, KIP-1152).
//
// The transactional ids of every __transaction_state partition this node
// coordinates, filtered by state, producer id, duration and pattern.
// State names Kafka does not know are returned in UnknownStateFilters
// and match nothing; a pattern that is not a valid regular expression is
// INVALID_REQUEST. A partition still loading makes the answer
// COORDINATOR_LOAD_IN_PROGRESS, with the ids of the partitions loaded.
// Only the ids the principal may describe are listed (Describe on the
// TransactionalId, Kafka's KafkaApis).

import (
	"regexp"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/txn"
)

func init() {
	register(&api{key: kmsg.ListTransactions.Int16(), min: 0, max: 2, serve: serveListTransactions})
}

func serveListTransactions(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.ListTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	f, ok := listFilter(req, resp)
	if !ok {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	if len(resp.UnknownStateFilters) > 0 && len(f.States) == 0 {
		return resp // only unknown states asked for: nothing matches
	}
	now := time.Now()
	for _, s := range b.txns.shards {
		s.do(func(c *txn.Coordinator) {
			ls, code := c.List(now, f)
			if code != 0 {
				resp.ErrorCode = code
			}
			for _, l := range ls {
				if b.txnIDRefusal(r, acl.OpDescribe, l.TransactionalID) != 0 {
					continue // only the ids the principal may describe
				}
				st := kmsg.NewListTransactionsResponseTransactionState()
				st.TransactionalID, st.ProducerID, st.TransactionState = l.TransactionalID, l.ProducerID, l.State.String()
				resp.TransactionStates = append(resp.TransactionStates, st)
			}
		})
	}
	return resp
}

// listFilter reads the request's filters; false if the pattern is bad.
func listFilter(req *kmsg.ListTransactionsRequest, resp *kmsg.ListTransactionsResponse) (txn.ListFilter, bool) {
	var f txn.ListFilter
	for _, name := range req.StateFilters {
		if st, ok := txn.ParseState(name); ok {
			f.States = append(f.States, st)
		} else {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, name)
		}
	}
	f.ProducerIDs = req.ProducerIDFilters
	if req.DurationFilterMillis > 0 {
		f.MinDuration = time.Duration(req.DurationFilterMillis) * time.Millisecond
	}
	if p := req.TransactionalIDPattern; p != nil && *p != "" {
		re, err := regexp.Compile("^(?:" + *p + ")$")
		if err != nil {
			return f, false
		}
		f.Match = re.MatchString
	}
	return f, true
}
