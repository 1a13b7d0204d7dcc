package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/internal/localcluster"
	"github.com/varve/varve/quorum"
)

// testbed is one three-node cluster of `varve server` processes and the
// clients the cases use.
type testbed struct {
	lc    *localcluster.Cluster
	dir   string
	cl    *kgo.Client    // bootstrapped from every node
	adm   *kadm.Client   // on cl
	ctrl  *quorum.Client // straight to the active controller
	polls []*kgo.Client  // polls[i]: node i+1 alone, for pollers
}

// nodeProps are the properties of every node besides the generated ones.
// Small index files: each partition's active segment maps two indexes,
// and Kafka's 10 MiB default would reserve 200 GiB of address space at
// 10,000 partitions for nothing (no record is produced here). No
// controller mutation quota (Varve's default admits 100 partitions a
// second, KIP-599): the path is measured, not the quota.
var nodeProps = map[string]string{"log.index.size.max.bytes": "16384", "varve.controller.mutation.rate": "0"}

// startTestbed starts a fresh cluster under dir and waits until every
// node's Metadata lists all three brokers.
func startTestbed(ctx context.Context, parent, bin string) (*testbed, error) {
	dir, err := os.MkdirTemp(parent, "varve-metadata-")
	if err != nil {
		return nil, err
	}
	lc, err := localcluster.Up(localcluster.Options{Nodes: 3, Dir: dir, Binary: bin, LogLevel: "warn", Props: nodeProps})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	tb := &testbed{lc: lc, dir: dir}
	if err := tb.connect(); err != nil {
		tb.close()
		return nil, err
	}
	if err := tb.waitBrokers(ctx, 60*time.Second); err != nil {
		tb.close()
		return nil, err
	}
	return tb, nil
}

func (tb *testbed) connect() error {
	var err error
	if tb.cl, err = kgo.NewClient(kgo.SeedBrokers(strings.Split(tb.lc.BootstrapServers(), ",")...)); err != nil {
		return err
	}
	tb.adm = kadm.NewClient(tb.cl)
	tb.adm.SetTimeoutMillis(120_000)
	qc := quorum.DefaultConfig()
	for _, n := range tb.lc.Nodes() {
		qc.Voters = append(qc.Voters, quorum.Voter{ID: int32(n.ID), Addr: n.ControllerAddr()})
		c, err := kgo.NewClient(kgo.SeedBrokers(n.Addr()))
		if err != nil {
			return err
		}
		tb.polls = append(tb.polls, c)
	}
	tb.ctrl = quorum.NewClient(qc)
	return nil
}

// preferController makes the controller client ask node id first, so
// that a probe's round trip is not a NOT_CONTROLLER and a retry.
func (tb *testbed) preferController(id int32) {
	qc := quorum.DefaultConfig()
	for _, n := range tb.lc.Nodes() {
		v := quorum.Voter{ID: int32(n.ID), Addr: n.ControllerAddr()}
		if v.ID == id {
			qc.Voters = append([]quorum.Voter{v}, qc.Voters...)
		} else {
			qc.Voters = append(qc.Voters, v)
		}
	}
	tb.ctrl.Close()
	tb.ctrl = quorum.NewClient(qc)
}

// waitBrokers waits until every node's Metadata names three brokers
// (registered and unfenced).
func (tb *testbed) waitBrokers(ctx context.Context, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for i := range tb.polls {
		for {
			resp, err := tb.metadata(ctx, i, nil)
			if err == nil && len(resp.Brokers) == 3 {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("node %d never listed three brokers: %v", i+1, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// metadata asks node i+1 (and only it) for Metadata of topics (nil:
// none).
func (tb *testbed) metadata(ctx context.Context, i int, topics []string) (*kmsg.MetadataResponse, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{}
	req.AllowAutoTopicCreation = false
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, tb.polls[i].SeedBrokers()[0])
	return resp, err
}

// activeController is the node id of the raft leader, which runs the
// active controller.
func (tb *testbed) activeController(ctx context.Context) (int32, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	t := kmsg.NewDescribeQuorumRequestTopic()
	t.Topic = "__cluster_metadata"
	t.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, t)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	kresp, err := tb.ctrl.Do(ctx, req)
	if err != nil {
		return -1, err
	}
	resp := kresp.(*kmsg.DescribeQuorumResponse)
	if len(resp.Topics) == 0 || len(resp.Topics[0].Partitions) == 0 {
		return -1, errors.New("DescribeQuorum: no partition in the answer")
	}
	p := resp.Topics[0].Partitions[0]
	return p.LeaderID, kerr.ErrorForCode(p.ErrorCode)
}

// createTopics creates topics (partitions each, replication factor 3)
// with one CreateTopics through kadm and checks every topic's answer.
func (tb *testbed) createTopics(ctx context.Context, partitions int32, names ...string) error {
	resps, err := tb.adm.CreateTopics(ctx, partitions, 3, nil, names...)
	if err != nil {
		return err
	}
	for _, r := range resps {
		if r.Err != nil {
			return fmt.Errorf("create %s: %w", r.Topic, r.Err)
		}
	}
	return nil
}

func (tb *testbed) close() {
	if tb.ctrl != nil {
		tb.ctrl.Close()
	}
	for _, c := range tb.polls {
		c.Close()
	}
	if tb.cl != nil {
		tb.cl.Close()
	}
	tb.lc.Stop()
	os.RemoveAll(tb.dir)
}
