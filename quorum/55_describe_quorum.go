package quorum

// DescribeQuorum (55), every version kmsg knows (KIP-595, KIP-836):
// the raft leader describes the metadata log's quorum: leader, epoch
// (raft's term), high watermark (the commit index: a raft index is the
// entry's Kafka offset in __cluster_metadata-0), and each voter's log
// end offset (raft's match index), and the same of each observer: the
// broker-only nodes that follow the log as raft learners. A node that does not lead answers
// NOT_LEADER_OR_FOLLOWER for the partition, as Kafka's raft client
// does; a partition other than __cluster_metadata-0 gets
// UNKNOWN_TOPIC_OR_PARTITION. Version 2's nodes list each voter's
// controller listener from controller.quorum.voters.

import (
	stdnet "net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.etcd.io/raft/v3"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

// metadataTopic is the metadata log's topic name.
const metadataTopic = "__cluster_metadata"

func init() {
	register(&api{key: kmsg.DescribeQuorum.Int16(), local: true, handle: handleDescribeQuorum,
		refuse: func(_ kmsg.Request, code int16) kmsg.Response {
			resp := kmsg.NewPtrDescribeQuorumResponse()
			resp.ErrorCode = code
			return resp
		}})
}

func handleDescribeQuorum(n *Node, _ *controller.Controller, _ int64, kreq kmsg.Request) ([]metadata.Record, kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeQuorumRequest)
	resp := kmsg.NewPtrDescribeQuorumResponse()
	for _, t := range req.Topics {
		rt := kmsg.NewDescribeQuorumResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewDescribeQuorumResponseTopicPartition()
			rp.Partition = p.Partition
			if t.Topic != metadataTopic || p.Partition != 0 {
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			} else {
				n.describePartition(&rp)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	resp.Nodes = n.quorumNodes()
	return nil, resp, nil
}

// describePartition fills the quorum's state; on the loop.
func (n *Node) describePartition(rp *kmsg.DescribeQuorumResponseTopicPartition) {
	st := n.rn.Status()
	if st.RaftState != raft.StateLeader {
		rp.ErrorCode = kerr.NotLeaderForPartition.Code
		rp.LeaderID, rp.LeaderEpoch = nodeID(st.Lead), int32(st.GetTerm())
		return
	}
	rp.LeaderID, rp.LeaderEpoch = n.cfg.NodeID, int32(st.GetTerm())
	rp.HighWatermark = int64(st.GetCommit())
	now := time.Now().UnixMilli()
	for _, v := range n.cfg.Voters {
		rs := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		rs.ReplicaID, rs.LogEndOffset = v.ID, -1
		rs.LastFetchTimestamp, rs.LastCaughtUpTimestamp = -1, -1
		if pr, ok := st.Progress[raftID(v.ID)]; ok {
			rs.LogEndOffset = int64(pr.Match)
			if pr.RecentActive || v.ID == n.cfg.NodeID {
				rs.LastFetchTimestamp = now
			}
			if pr.Match >= st.GetCommit() {
				rs.LastCaughtUpTimestamp = now
			}
		}
		rp.CurrentVoters = append(rp.CurrentVoters, rs)
	}
	for _, id := range n.conf.GetLearners() {
		rs := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		rs.ReplicaID, rs.LogEndOffset = nodeID(id), -1
		rs.LastFetchTimestamp, rs.LastCaughtUpTimestamp = -1, -1
		if pr, ok := st.Progress[id]; ok {
			rs.LogEndOffset = int64(pr.Match)
			if pr.RecentActive {
				rs.LastFetchTimestamp = now
			}
			if pr.Match >= st.GetCommit() {
				rs.LastCaughtUpTimestamp = now
			}
		}
		rp.Observers = append(rp.Observers, rs)
	}
}

// quorumNodes lists the voters' controller listeners (version 2).
func (n *Node) quorumNodes() []kmsg.DescribeQuorumResponseNode {
	var out []kmsg.DescribeQuorumResponseNode
	for _, v := range n.cfg.Voters {
		host, port, err := stdnet.SplitHostPort(v.Addr)
		pn, perr := strconv.ParseUint(port, 10, 16)
		if err != nil || perr != nil {
			continue
		}
		nd := kmsg.NewDescribeQuorumResponseNode()
		nd.NodeID = v.ID
		l := kmsg.NewDescribeQuorumResponseNodeListener()
		l.Name, l.Host, l.Port = "CONTROLLER", host, uint16(pn)
		nd.Listeners = append(nd.Listeners, l)
		out = append(out, nd)
	}
	return out
}
