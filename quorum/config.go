package quorum

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	stdnet "net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/varve/varve/controller"
	vnet "github.com/varve/varve/net"
)

// MetadataLogDirName is the metadata log's directory under the
// metadata log dir, as KRaft names its one partition.
const MetadataLogDirName = "__cluster_metadata-0"

// Voter is one member of controller.quorum.voters: a node id and the
// address of its controller listener.
type Voter struct {
	ID   int32
	Addr string // host:port
}

// ParseVoters parses controller.quorum.voters, Kafka's
// "id@host:port,id@host:port" list.
func ParseVoters(s string) ([]Voter, error) {
	var out []Voter
	seen := map[int32]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		idStr, addr, ok := strings.Cut(f, "@")
		id, err := strconv.ParseInt(idStr, 10, 32)
		if !ok || err != nil || id < 0 {
			return nil, fmt.Errorf("controller.quorum.voters: %q is not id@host:port", f)
		}
		if _, _, err := stdnet.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("controller.quorum.voters: %q: %w", f, err)
		}
		if seen[int32(id)] {
			return nil, fmt.Errorf("controller.quorum.voters: node %d named twice", id)
		}
		seen[int32(id)] = true
		out = append(out, Voter{ID: int32(id), Addr: addr})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("controller.quorum.voters: no voter")
	}
	return out, nil
}

// Config is a node's quorum settings, under Kafka's property names
// where Kafka has one.
type Config struct {
	// NodeID is node.id: the node's raft id too.
	NodeID int32
	// ClusterID is cluster.id, from meta.properties.
	ClusterID string
	// Voters is controller.quorum.voters.
	Voters []Voter
	// ListenAddr is the controller listener's host:port; "" means this
	// node's address in Voters. A node not in Voters is a raft learner
	// and must name one (varve.quorum.learner.listener): the leader
	// sends it the log there. Outgoing connections to peers are dialed
	// from its host.
	ListenAddr string
	// MetadataLogDir is metadata.log.dir (else the first of log.dirs):
	// the metadata log lives in MetadataLogDir/__cluster_metadata-0.
	MetadataLogDir string

	// ElectionTimeoutMs is controller.quorum.election.timeout.ms (1000).
	ElectionTimeoutMs int64
	// TickMs is the period of raft's logical clock (not a Kafka setting;
	// 100): raft heartbeats every tick and elections time out after
	// ElectionTimeoutMs/TickMs ticks (randomised up to twice that).
	TickMs int64
	// RetryBackoffMs is controller.quorum.retry.backoff.ms (20): the
	// Client's wait before it tries the next controller.
	RetryBackoffMs int64
	// RequestTimeoutMs is controller.quorum.request.timeout.ms (2000):
	// the Client's bound on one round trip.
	RequestTimeoutMs int64
	// SnapshotIntervalMs is metadata.log.max.snapshot.interval.ms
	// (3600000).
	SnapshotIntervalMs int64
	// SnapshotBytes is metadata.log.max.record.bytes.between.snapshots
	// (20 MiB).
	SnapshotBytes int64
	// SegmentBytes is metadata.log.segment.bytes (1 GiB).
	SegmentBytes int64
	// PeerQueue bounds the raft messages waiting for one peer's
	// connection (not a Kafka setting; 1024): a full queue drops.
	PeerQueue int

	// Controller configures the active controller. Its TopicSettings
	// also validates CreateTopics' configuration overrides.
	Controller controller.Config
	// Net configures the controller listener's server.
	Net vnet.Config
	// TLS, when set, serves the controller listener (a learner's too)
	// over TLS: the listener's SSL or SASL_SSL.
	TLS *tls.Config
	// Secure, when set, makes each connection this node dials to another
	// member (the raft transport, the Client) one the member's listener
	// admits: a TLS handshake, a SASL exchange. It closes conn when it
	// fails; ctx bounds it.
	Secure func(ctx context.Context, conn stdnet.Conn, addr string) (stdnet.Conn, error)
	// Authenticate, when set, sees every request on the listener first
	// and reports whether it answered it itself: the SASL exchange, or
	// a refusal before authentication. Requests it passes on are served.
	Authenticate func(r *vnet.Request, respond func(vnet.Response)) bool
	// Logger receives the node's logs; nil means slog.Default().
	Logger *slog.Logger
	// OnElections, when set, is told of the partition leader elections
	// of each of the active controller's entries once it has applied:
	// how many partitions got a new leader, how many of them uncleanly
	// (their recovery state RECOVERING), and the time from the
	// operation's start to the entry's application. Kafka's
	// ControllerStats LeaderElectionRateAndTimeMs and
	// UncleanLeaderElectionsPerSec are made of it. It runs on the loop:
	// it must not block.
	OnElections func(elected, unclean int, took time.Duration)
}

// DefaultConfig returns Kafka's defaults for a node (NodeID, ClusterID,
// Voters and MetadataLogDir are the caller's).
func DefaultConfig() Config {
	return Config{
		ElectionTimeoutMs:  1000,
		TickMs:             100,
		RetryBackoffMs:     20,
		RequestTimeoutMs:   2000,
		SnapshotIntervalMs: 3_600_000,
		SnapshotBytes:      20 << 20,
		PeerQueue:          1024,
		Controller:         controller.DefaultConfig(),
	}
}

// check validates c and fills what derives from other fields.
func (c *Config) check() error {
	if c.NodeID < 0 {
		return fmt.Errorf("quorum: node.id %d", c.NodeID)
	}
	if c.ClusterID == "" {
		return fmt.Errorf("quorum: no cluster.id")
	}
	if c.MetadataLogDir == "" {
		return fmt.Errorf("quorum: no metadata.log.dir")
	}
	if c.TickMs <= 0 || c.ElectionTimeoutMs < 2*c.TickMs {
		return fmt.Errorf("quorum: election timeout %d ms must be at least two ticks of %d ms", c.ElectionTimeoutMs, c.TickMs)
	}
	if c.ListenAddr == "" {
		for _, v := range c.Voters {
			if v.ID == c.NodeID {
				c.ListenAddr = v.Addr
			}
		}
	}
	if c.ListenAddr == "" {
		return fmt.Errorf("quorum: node %d is not in controller.quorum.voters and has no listener to follow the log on as a raft learner (varve.quorum.learner.listener)", c.NodeID)
	}
	if c.PeerQueue <= 0 {
		c.PeerQueue = 1024
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// secure applies Secure, if set, to a connection dialed to addr.
func (c *Config) secure(ctx context.Context, conn stdnet.Conn, addr string) (stdnet.Conn, error) {
	if c.Secure == nil {
		return conn, nil
	}
	return c.Secure(ctx, conn, addr)
}

func (c *Config) tick() time.Duration { return time.Duration(c.TickMs) * time.Millisecond }

func (c *Config) electionTicks() int { return int(c.ElectionTimeoutMs / c.TickMs) }

func (c *Config) logDir() string { return filepath.Join(c.MetadataLogDir, MetadataLogDirName) }

// voterIDs returns the voters' raft ids.
func (c *Config) voterIDs() []uint64 {
	ids := make([]uint64, len(c.Voters))
	for i, v := range c.Voters {
		ids[i] = raftID(v.ID)
	}
	return ids
}

// isVoter reports whether node is in controller.quorum.voters.
func (c *Config) isVoter(node int32) bool {
	for _, v := range c.Voters {
		if v.ID == node {
			return true
		}
	}
	return false
}

// splitHostPort splits a host:port with a numeric port.
func splitHostPort(addr string) (string, int32, error) {
	host, port, err := stdnet.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("quorum: port of %s: %w", addr, err)
	}
	return host, int32(p), nil
}

// raftID is node id's raft id: the node id plus one, because raft's id
// 0 means "none" and Kafka's node ids start at 0.
func raftID(node int32) uint64 { return uint64(node) + 1 }

// nodeID is the node id of a raft id; -1 for raft's none.
func nodeID(raft uint64) int32 { return int32(raft) - 1 }

// localHost returns the host outgoing connections are dialed from: the
// controller listener's, so that each node's links are told apart by
// address.
func localHost(listen string) *stdnet.TCPAddr {
	host, _, err := stdnet.SplitHostPort(listen)
	if err != nil {
		return nil
	}
	ip := stdnet.ParseIP(host)
	if ip == nil || ip.IsUnspecified() {
		return nil
	}
	return &stdnet.TCPAddr{IP: ip}
}
