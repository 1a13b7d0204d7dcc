package quorum

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	stdnet "net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
)

// errBackoff is a dial skipped while the last one's backoff runs.
var errBackoff = errors.New("quorum: waiting to dial again")

// maxResponseBytes bounds a controller's response, read before it is
// allocated.
const maxResponseBytes = 100 << 20

// Client sends Kafka's controller requests to the active controller:
// to the raft leader this node knows of first, then to each voter in
// turn, retrying NOT_CONTROLLER answers and connection errors every
// controller.quorum.retry.backoff.ms until the caller's context ends.
// It keeps one connection per voter, dialed from this node's host, with
// one request in flight on each. Safe for concurrent use.
type Client struct {
	cfg    *Config
	leader func() int32 // the raft leader's node id as this node knows it, -1 if none

	mu     sync.Mutex
	conns  map[int32]*clientConn
	closed bool
	corr   int32
}

type clientConn struct {
	mu   sync.Mutex // one request in flight
	conn stdnet.Conn
}

func newClient(cfg *Config, leader func() int32) *Client {
	return &Client{cfg: cfg, leader: leader, conns: map[int32]*clientConn{}}
}

// NewClient returns a client of the quorum cfg.Voters names, for a
// process that runs no Node; its first guess is the first voter.
func NewClient(cfg Config) *Client {
	c := cfg
	return newClient(&c, func() int32 { return -1 })
}

// Do sends req to the active controller and returns its answer. A
// request whose version is 0 is sent at kmsg's highest version of it
// (every version kmsg knows is served). The answer is never
// NOT_CONTROLLER: Do retries those until ctx ends, then returns ctx's
// error.
func (c *Client) Do(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	if req.GetVersion() == 0 {
		req.SetVersion(req.MaxVersion())
	}
	next := 0
	for {
		target := c.leader()
		if target < 0 || next > 0 {
			target = c.cfg.Voters[next%len(c.cfg.Voters)].ID
		}
		resp, err := c.roundTrip(ctx, target, req)
		if err == nil && !notController(resp) {
			return resp, nil
		}
		next++
		select {
		case <-ctx.Done():
			if err == nil {
				err = kerr.NotController
			}
			return nil, fmt.Errorf("quorum: no active controller answered: %w (last: %v)", ctx.Err(), err)
		case <-time.After(time.Duration(c.cfg.RetryBackoffMs) * time.Millisecond):
		}
	}
}

// Close closes the client's connections.
func (c *Client) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for id, cc := range c.conns {
		cc.mu.Lock()
		if cc.conn != nil {
			cc.conn.Close()
		}
		cc.mu.Unlock()
		delete(c.conns, id)
	}
}

// roundTrip sends req to voter id and reads its response.
func (c *Client) roundTrip(ctx context.Context, id int32, req kmsg.Request) (kmsg.Response, error) {
	cc, corr, err := c.conn(id)
	if err != nil {
		return nil, err
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.conn == nil {
		if err := c.dial(ctx, cc, id); err != nil {
			return nil, err
		}
	}
	deadline := time.Now().Add(time.Duration(c.cfg.RequestTimeoutMs) * time.Millisecond)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	cc.conn.SetDeadline(deadline)
	resp, err := exchange(cc.conn, corr, req, "varve-controller-client-"+itoa(c.cfg.NodeID))
	if err != nil {
		cc.conn.Close()
		cc.conn = nil
	}
	return resp, err
}

func (c *Client) conn(id int32) (*clientConn, int32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, 0, ErrStopped
	}
	cc := c.conns[id]
	if cc == nil {
		cc = &clientConn{}
		c.conns[id] = cc
	}
	c.corr++
	return cc, c.corr, nil
}

// dial connects to voter id from this node's host.
func (c *Client) dial(ctx context.Context, cc *clientConn, id int32) error {
	var addr string
	for _, v := range c.cfg.Voters {
		if v.ID == id {
			addr = v.Addr
		}
	}
	if addr == "" {
		return fmt.Errorf("quorum: node %d is not a voter", id)
	}
	d := stdnet.Dialer{Timeout: time.Duration(c.cfg.RequestTimeoutMs) * time.Millisecond}
	if a := localHost(c.cfg.ListenAddr); a != nil {
		d.LocalAddr = a
	}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	hctx, cancel := context.WithTimeout(ctx, d.Timeout)
	defer cancel()
	if conn, err = c.cfg.secure(hctx, conn, addr); err != nil {
		return err
	}
	cc.conn = conn
	return nil
}

// exchange writes one request and reads its response.
func exchange(conn stdnet.Conn, corr int32, req kmsg.Request, clientID string) (kmsg.Response, error) {
	key, version := req.Key(), req.GetVersion()
	flexible := vnet.IsFlexible(key, version)
	buf := vnet.AppendRequestHeader(make([]byte, 4, 256), vnet.RequestHeader{Key: key, Version: version,
		CorrelationID: corr, ClientID: clientID, Flexible: flexible})
	buf = req.AppendTo(buf)
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	if _, err := conn.Write(buf); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 4 || n > maxResponseBytes {
		return nil, fmt.Errorf("quorum: response size %d", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(conn, body); err != nil {
		return nil, err
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != corr {
		return nil, fmt.Errorf("quorum: response to correlation id %d, want %d", got, corr)
	}
	body = body[4:]
	if flexible && key != kmsg.ApiVersions.Int16() {
		if len(body) == 0 {
			return nil, fmt.Errorf("quorum: response header cut short")
		}
		body = body[1:] // no tagged fields are sent
	}
	resp := req.ResponseKind()
	resp.SetVersion(version)
	if err := resp.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("quorum: response to api %d: %w", key, err)
	}
	return resp, nil
}

// notController reports whether resp is a refusal by a node that is
// not the active controller (or, for DescribeQuorum, not the raft
// leader).
func notController(resp kmsg.Response) bool {
	nc := kerr.NotController.Code
	switch r := resp.(type) {
	case *kmsg.BrokerRegistrationResponse:
		return r.ErrorCode == nc
	case *kmsg.BrokerHeartbeatResponse:
		return r.ErrorCode == nc
	case *kmsg.AlterPartitionResponse:
		return r.ErrorCode == nc
	case *kmsg.AllocateProducerIDsResponse:
		return r.ErrorCode == nc
	case *kmsg.ElectLeadersResponse:
		return r.ErrorCode == nc
	case *kmsg.AlterPartitionAssignmentsResponse:
		return r.ErrorCode == nc
	case *kmsg.ListPartitionReassignmentsResponse:
		return r.ErrorCode == nc
	case *kmsg.CreateTopicsResponse:
		return len(r.Topics) > 0 && r.Topics[0].ErrorCode == nc
	case *kmsg.DeleteTopicsResponse:
		return len(r.Topics) > 0 && r.Topics[0].ErrorCode == nc
	case *kmsg.CreatePartitionsResponse:
		return len(r.Topics) > 0 && r.Topics[0].ErrorCode == nc
	case *kmsg.IncrementalAlterConfigsResponse:
		return len(r.Resources) > 0 && r.Resources[0].ErrorCode == nc
	case *kmsg.DescribeQuorumResponse:
		return r.ErrorCode == nc || len(r.Topics) > 0 && len(r.Topics[0].Partitions) > 0 &&
			r.Topics[0].Partitions[0].ErrorCode == kerr.NotLeaderForPartition.Code
	}
	return false
}
