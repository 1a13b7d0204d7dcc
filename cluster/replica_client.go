package cluster

// The follower fetchers' wire (replica.LeaderEndpoint): Fetch v17 with
// the fetcher's session id, epoch and forgotten partitions (KIP-227),
// ReplicaState{ReplicaId, ReplicaEpoch} (v15+), topic ids (v13+) and
// LastFetchedEpoch (v12+), over connections to the leader's
// inter.broker.listener.name endpoint from the image's broker
// registrations. A connection serves one fetch at a time; with
// num.replica.fetchers loops towards a leader there are at most that
// many, each loop keeping one; each is secured as the inter-broker
// listener says (TLS, SASL: security_peer.go). Connections dial from this node's own
// listener host, so that on one machine every node's links are told
// apart by address (the fault tests cut them by source and
// destination).

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	stdnet "net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/replica"
	"github.com/varve/varve/segment"
)

// replicaFetchVersion is the Fetch version followers send.
const replicaFetchVersion = 17

// replicaClient is the broker's replica.LeaderEndpoint.
type replicaClient struct {
	b       *Broker
	timeout time.Duration // replica.socket.timeout.ms
	maxResp int32         // bound on a response's size before it is read

	mu   sync.Mutex
	idle map[int32][]*peerConn // by leader id
	corr int32
}

type peerConn struct {
	addr string
	c    stdnet.Conn
	r    *bufio.Reader
}

func newReplicaClient(b *Broker) *replicaClient {
	return &replicaClient{b: b, timeout: b.cfg.ReplicaSocketTimeoutMs.Duration(),
		maxResp: int32(max(b.cfg.ReplicaFetchResponseMaxBytes, b.cfg.ReplicaFetchMaxBytes)) + 1<<20,
		idle:    map[int32][]*peerConn{}}
}

// Fetch implements replica.LeaderEndpoint.
func (c *replicaClient) Fetch(ctx context.Context, leader int32, rf replica.ReplicaFetch) (replica.ReplicaFetchResponse, error) {
	addr, err := c.leaderAddr(leader)
	if err != nil {
		return replica.ReplicaFetchResponse{}, err
	}
	pc, err := c.conn(ctx, leader, addr)
	if err != nil {
		return replica.ReplicaFetchResponse{}, err
	}
	req, names := replicaFetchRequest(rf)
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	if err := c.roundTrip(ctx, pc, req, resp, rf.MaxWait); err != nil {
		pc.c.Close()
		return replica.ReplicaFetchResponse{}, fmt.Errorf("fetch from broker %d at %s: %w", leader, addr, err)
	}
	c.release(leader, pc)
	return replicaFetchResults(resp, names, c.topicName)
}

// topicName is a topic's name in the image, for the partitions of a
// fetch session that a response names without the request naming them.
func (c *replicaClient) topicName(id [16]byte) (string, bool) {
	t, ok := c.b.meta.image().TopicByID(id)
	if !ok {
		return "", false
	}
	return t.Name, true
}

// leaderAddr is the leader's inter-broker endpoint in the image.
func (c *replicaClient) leaderAddr(leader int32) (string, error) {
	br, ok := c.b.meta.image().Broker(leader)
	if !ok {
		return "", fmt.Errorf("broker %d is not registered", leader)
	}
	name := c.b.cfg.InterBrokerListenerName
	for _, e := range br.Endpoints {
		if e.Listener == name || name == "" {
			return stdnet.JoinHostPort(e.Host, strconv.Itoa(int(e.Port))), nil
		}
	}
	if len(br.Endpoints) > 0 { // a registration without listener names
		e := br.Endpoints[0]
		return stdnet.JoinHostPort(e.Host, strconv.Itoa(int(e.Port))), nil
	}
	return "", fmt.Errorf("broker %d has no %s endpoint", leader, name)
}

// conn takes an idle connection to addr or dials one from this node's
// own host.
func (c *replicaClient) conn(ctx context.Context, leader int32, addr string) (*peerConn, error) {
	c.mu.Lock()
	for len(c.idle[leader]) > 0 {
		n := len(c.idle[leader])
		pc := c.idle[leader][n-1]
		c.idle[leader] = c.idle[leader][:n-1]
		if pc.addr == addr {
			c.mu.Unlock()
			return pc, nil
		}
		pc.c.Close() // the leader moved
	}
	c.mu.Unlock()
	d := stdnet.Dialer{Timeout: c.timeout, LocalAddr: c.localAddr()}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	hctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if nc, err = c.b.sec.toBrokers.secure(hctx, nc, addr); err != nil {
		return nil, err
	}
	return &peerConn{addr: addr, c: nc, r: bufio.NewReaderSize(nc, 64<<10)}, nil
}

// localAddr is this node's inter-broker listener host, port 0; nil
// when it listens on every address.
func (c *replicaClient) localAddr() stdnet.Addr {
	for _, l := range c.b.cfg.Listeners {
		if l.Name != c.b.cfg.InterBrokerListenerName && len(c.b.cfg.Listeners) > 1 {
			continue
		}
		if ip := stdnet.ParseIP(l.Host); ip != nil && !ip.IsUnspecified() {
			return &stdnet.TCPAddr{IP: ip}
		}
		return nil
	}
	return nil
}

func (c *replicaClient) release(leader int32, pc *peerConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.idle[leader] = append(c.idle[leader], pc)
}

// close closes the idle connections (the broker is stopping).
func (c *replicaClient) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, pcs := range c.idle {
		for _, pc := range pcs {
			pc.c.Close()
		}
		delete(c.idle, id)
	}
}

// roundTrip writes req and reads its response, within
// replica.socket.timeout.ms beyond the fetch's own wait.
func (c *replicaClient) roundTrip(ctx context.Context, pc *peerConn, req kmsg.Request, resp kmsg.Response, wait time.Duration) error {
	c.mu.Lock()
	c.corr++
	corr := c.corr
	c.mu.Unlock()
	deadline := time.Now().Add(c.timeout + wait)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	pc.c.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { pc.c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	buf := kmsg.NewRequestFormatter(kmsg.FormatterClientID("varve-replica-fetcher")).AppendRequest(nil, req, corr)
	if _, err := pc.c.Write(buf); err != nil {
		return err
	}
	var size [4]byte
	if _, err := io.ReadFull(pc.r, size[:]); err != nil {
		return err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 4 || n > c.maxResp {
		return fmt.Errorf("%w: response of %d bytes", kerr.CorruptMessage, n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(pc.r, body); err != nil {
		return err
	}
	rd := kbin.Reader{Src: body}
	if got := rd.Int32(); got != corr {
		return fmt.Errorf("response for correlation id %d, want %d", got, corr)
	}
	if req.IsFlexible() {
		skipTags(&rd)
	}
	resp.SetVersion(req.GetVersion())
	return resp.ReadFrom(rd.Src)
}

// skipTags skips a tagged-field section of a flexible header.
func skipTags(rd *kbin.Reader) {
	for n := rd.Uvarint(); n > 0 && rd.Ok(); n-- {
		rd.Uvarint()
		rd.Span(int(rd.Uvarint()))
	}
}

// replicaFetchRequest is rf as a Fetch request; names maps topic ids
// back to names.
func replicaFetchRequest(rf replica.ReplicaFetch) (*kmsg.FetchRequest, map[[16]byte]string) {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(replicaFetchVersion)
	req.ReplicaID = -1 // v15+: ReplicaState carries it
	req.ReplicaState.ID, req.ReplicaState.Epoch = rf.ReplicaID, rf.ReplicaEpoch
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = int32(rf.MaxWait/time.Millisecond), rf.MinBytes, rf.MaxBytes
	req.SessionID, req.SessionEpoch = rf.SessionID, rf.SessionEpoch // KIP-227
	names := map[[16]byte]string{}
	at := map[[16]byte]int{}
	for _, p := range rf.Partitions {
		i, ok := at[p.TopicID]
		if !ok {
			i = len(req.Topics)
			at[p.TopicID], names[p.TopicID] = i, p.TP.Topic
			t := kmsg.NewFetchRequestTopic()
			t.Topic, t.TopicID = p.TP.Topic, p.TopicID
			req.Topics = append(req.Topics, t)
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.CurrentLeaderEpoch = p.TP.Partition, p.FetchOffset, p.CurrentLeaderEpoch
		rp.LastFetchedEpoch, rp.LogStartOffset, rp.PartitionMaxBytes = p.LastFetchedEpoch, p.LogStartOffset, p.MaxBytes
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	req.ForgottenTopics = forgottenTopics(rf.Forgotten)
	return req, names
}

// forgottenTopics groups the partitions a session drops by topic id.
func forgottenTopics(keys []replica.ReplicaFetchKey) []kmsg.FetchRequestForgottenTopic {
	var out []kmsg.FetchRequestForgottenTopic
	at := map[[16]byte]int{}
	for _, k := range keys {
		i, ok := at[k.TopicID]
		if !ok {
			i = len(out)
			at[k.TopicID] = i
			ft := kmsg.NewFetchRequestForgottenTopic()
			ft.Topic, ft.TopicID = k.TP.Topic, k.TopicID
			out = append(out, ft)
		}
		out[i].Partitions = append(out[i].Partitions, k.TP.Partition)
	}
	return out
}

// replicaFetchResults turns a Fetch response into the session's reply
// and per-partition answers; topic ids not in the request are looked up
// with lookup (an incremental response names the session's partitions).
func replicaFetchResults(resp *kmsg.FetchResponse, names map[[16]byte]string, lookup func([16]byte) (string, bool)) (replica.ReplicaFetchResponse, error) {
	out := replica.ReplicaFetchResponse{ErrorCode: resp.ErrorCode, SessionID: resp.SessionID}
	if resp.ErrorCode != 0 {
		return out, nil
	}
	for _, t := range resp.Topics {
		name, ok := names[t.TopicID]
		if !ok {
			name, ok = lookup(t.TopicID)
		}
		if !ok {
			return replica.ReplicaFetchResponse{}, errors.New("fetch response names a topic this node does not know")
		}
		for _, p := range t.Partitions {
			r := replica.ReplicaFetchResult{TP: segment.TopicPartition{Topic: name, Partition: p.Partition}}
			r.Err, r.HighWatermark, r.LogStartOffset, r.Records = kerr.ErrorForCode(p.ErrorCode), p.HighWatermark, p.LogStartOffset, p.RecordBatches
			if p.DivergingEpoch.Epoch >= 0 || p.DivergingEpoch.EndOffset >= 0 {
				r.Diverging = &replica.EpochEnd{Epoch: p.DivergingEpoch.Epoch, EndOffset: p.DivergingEpoch.EndOffset}
			}
			out.Partitions = append(out.Partitions, r)
		}
	}
	return out, nil
}
