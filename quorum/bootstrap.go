package quorum

// controller.quorum.bootstrap.servers (KIP-853) for broker-only nodes:
// a broker given the bootstrap servers alone learns the voters from one
// of them. It asks DescribeQuorum, whose version 2 lists each voter's
// controller listener (its Nodes), and runs as a raft learner of those
// voters, as if controller.quorum.voters had named them. The voters
// themselves still need controller.quorum.voters: KIP-853's dynamic
// quorum (voters added and removed by AddRaftVoter and RemoveRaftVoter,
// kraft.version 1) is not Varve's, and a controller with the bootstrap
// servers alone is refused.

import (
	"context"
	"errors"
	"fmt"
	stdnet "net"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrDynamicQuorum refuses a controller without controller.quorum.voters.
var ErrDynamicQuorum = errors.New("controller.quorum.bootstrap.servers without controller.quorum.voters on a controller: " +
	"a dynamic quorum (KIP-853, kraft.version 1) is not supported; name the voters in controller.quorum.voters " +
	"(broker-only nodes may use controller.quorum.bootstrap.servers alone)")

// DiscoverVoters asks the bootstrap servers, in turn, for the quorum's
// voters (DescribeQuorum v2's nodes, each voter's first listener), and
// retries every retry until one answers or ctx ends.
func DiscoverVoters(ctx context.Context, bootstrap []string, clientID string, retry time.Duration) ([]Voter, error) {
	var last error
	for {
		for _, addr := range bootstrap {
			vs, err := askVoters(ctx, addr, clientID)
			if err == nil {
				return vs, nil
			}
			last = fmt.Errorf("%s: %w", addr, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("controller.quorum.bootstrap.servers: no server named the voters: %w", errors.Join(last, ctx.Err()))
		case <-time.After(retry):
		}
	}
}

// askVoters asks one bootstrap server.
func askVoters(ctx context.Context, addr, clientID string) ([]Voter, error) {
	var d stdnet.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	} else {
		conn.SetDeadline(time.Now().Add(10 * time.Second))
	}
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.SetVersion(2)
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = metadataTopic
	rt.Partitions = append(rt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	resp, err := exchange(conn, 1, req, clientID)
	if err != nil {
		return nil, err
	}
	return votersOf(resp.(*kmsg.DescribeQuorumResponse))
}

// votersOf reads the voters of a DescribeQuorum v2 answer: each node's
// first listener, in node id order.
func votersOf(resp *kmsg.DescribeQuorumResponse) ([]Voter, error) {
	var out []Voter
	for _, nd := range resp.Nodes {
		if len(nd.Listeners) == 0 || nd.NodeID < 0 {
			continue
		}
		l := nd.Listeners[0]
		out = append(out, Voter{ID: nd.NodeID, Addr: stdnet.JoinHostPort(l.Host, strconv.Itoa(int(l.Port)))})
	}
	if len(out) == 0 {
		return nil, errors.New("DescribeQuorum named no voter")
	}
	slices.SortFunc(out, func(a, b Voter) int { return int(a.ID) - int(b.ID) })
	return out, nil
}
