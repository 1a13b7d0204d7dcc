package chaos_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/varve/varve/chaos"
	"github.com/varve/varve/internal/localcluster"
)

var hosts = []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}

// newNet makes a Net over hosts in the test's namespace, with a
// listener on each host that echoes what it reads.
func newNet(t *testing.T) (*chaos.Net, []string) {
	t.Helper()
	n, err := chaos.NewNet(hosts...)
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for _, h := range hosts {
		ln, err := net.Listen("tcp", h+":0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go echo(ln)
		addrs = append(addrs, ln.Addr().String())
	}
	return n, addrs
}

func echo(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() { io.Copy(c, c); c.Close() }()
	}
}

// dial connects from host to addr (binding the source address, as
// nodes do), within wait.
func dial(from, addr string, wait time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: wait, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	return d.Dial("tcp", addr)
}

// reaches reports whether a connection from host from to addr opens
// within 300ms; a refused connection is a test failure, since a cut
// must look like silence.
func reaches(t *testing.T, from, addr string) bool {
	t.Helper()
	c, err := dial(from, addr, 300*time.Millisecond)
	if err == nil {
		c.Close()
		return true
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("%s -> %s: %v, want a timeout", from, addr, err)
	}
	return false
}

// roundTrip writes a byte on c and reports whether it comes back
// within wait.
func roundTrip(c net.Conn, wait time.Duration) bool {
	c.SetDeadline(time.Now().Add(wait))
	if _, err := c.Write([]byte{1}); err != nil {
		return false
	}
	var b [1]byte
	_, err := io.ReadFull(c, b[:])
	return err == nil
}

// A cut between two nodes drops their traffic both ways, silently (new
// connections time out, an established one stalls), leaves other links
// alone, and its heal restores both; the stalled connection delivers
// what it held once healed (TCP retransmits), as after a real
// partition.
func TestNetCutBlocksAndHealRestores(t *testing.T) {
	if !chaos.EnterNetns(t) {
		return
	}
	n, addrs := newNet(t)
	if !reaches(t, hosts[0], addrs[1]) || !reaches(t, hosts[1], addrs[0]) {
		t.Fatal("nodes 0 and 1 do not reach each other before any cut")
	}
	est, err := dial(hosts[0], addrs[1], time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer est.Close()
	if !roundTrip(est, time.Second) {
		t.Fatal("no round trip before the cut")
	}
	heal, err := n.Cut(0, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if reaches(t, hosts[0], addrs[1]) || reaches(t, hosts[1], addrs[0]) {
		t.Fatal("a cut link still connects")
	}
	if !reaches(t, hosts[0], addrs[2]) || !reaches(t, hosts[2], addrs[1]) {
		t.Fatal("a cut between nodes 0 and 1 blocked node 2's links")
	}
	if roundTrip(est, 500*time.Millisecond) {
		t.Fatal("an established connection across the cut still delivers")
	}
	if err := heal(); err != nil {
		t.Fatal(err)
	}
	if !reaches(t, hosts[0], addrs[1]) || !reaches(t, hosts[1], addrs[0]) {
		t.Fatal("the healed link does not connect")
	}
	var b [1]byte
	est.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(est, b[:]); err != nil {
		t.Fatalf("the byte written during the cut never came back after the heal: %v", err)
	}
}

// A one-way cut drops what node 0 sends node 1 and nothing of what node
// 1 sends node 0 (seen with datagrams; TCP needs both ways, so a
// connection in either direction stalls).
func TestNetOneWayCut(t *testing.T) {
	if !chaos.EnterNetns(t) {
		return
	}
	n, addrs := newNet(t)
	heal, err := n.Cut(0, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	if datagram(t, hosts[0], hosts[1]) {
		t.Fatal("a datagram crossed a one-way cut in the cut direction")
	}
	if !datagram(t, hosts[1], hosts[0]) {
		t.Fatal("a one-way cut dropped a datagram in the other direction")
	}
	if reaches(t, hosts[1], addrs[0]) {
		t.Fatal("a TCP connection opened across a one-way cut (its SYN-ACK should be dropped)")
	}
	if err := heal(); err != nil {
		t.Fatal(err)
	}
	if !datagram(t, hosts[0], hosts[1]) {
		t.Fatal("no datagram after the heal")
	}
}

// datagram reports whether a UDP datagram from host from reaches a
// socket on host to within 300ms.
func datagram(t *testing.T, from, to string) bool {
	t.Helper()
	rc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(to)})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	sc, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP(from)}, rc.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if _, err := sc.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	rc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	_, _, err = rc.ReadFrom(make([]byte, 8))
	return err == nil
}

// Isolating a node cuts it from every other node and leaves the others
// connected; cuts overlap (healing one leaves the other's links cut);
// HealAll heals everything and empties the rules.
func TestNetIsolateSplitAndHealAll(t *testing.T) {
	if !chaos.EnterNetns(t) {
		return
	}
	n, addrs := newNet(t)
	healIso, err := n.Isolate(1)
	if err != nil {
		t.Fatal(err)
	}
	if reaches(t, hosts[1], addrs[0]) || reaches(t, hosts[1], addrs[2]) || reaches(t, hosts[0], addrs[1]) {
		t.Fatal("an isolated node still connects")
	}
	if !reaches(t, hosts[0], addrs[2]) || !reaches(t, hosts[2], addrs[0]) {
		t.Fatal("isolating node 1 cut nodes 0 and 2 apart")
	}
	if _, err := n.Cut(0, 1, false); err != nil {
		t.Fatal(err)
	}
	if err := healIso(); err != nil {
		t.Fatal(err)
	}
	if reaches(t, hosts[0], addrs[1]) || !reaches(t, hosts[2], addrs[1]) {
		t.Fatal("healing the isolation also healed the cut 0-1, or left 2-1 cut")
	}
	if _, err := n.Split(0, 2); err != nil {
		t.Fatal(err)
	}
	if reaches(t, hosts[2], addrs[1]) || !reaches(t, hosts[0], addrs[2]) {
		t.Fatal("split {0,2} | {1} is not what connects")
	}
	if err := n.HealAll(); err != nil {
		t.Fatal(err)
	}
	for i := range hosts {
		for j := range hosts {
			if i != j && !reaches(t, hosts[i], addrs[j]) {
				t.Fatalf("after HealAll node %d does not reach node %d", i, j)
			}
		}
	}
	if rules, err := n.Rules(); err != nil || strings.Contains(rules, "drop") {
		t.Fatalf("rules after HealAll (%v):\n%s", err, rules)
	}
	if _, err := n.Cut(0, 0, false); err == nil {
		t.Fatal("a node cut from itself")
	}
}

// The rules live in the test's namespace and go with it: after the
// child test that cut links has exited, the host has no such table.
func TestNetRulesVanishWithTheNamespace(t *testing.T) {
	if !chaos.EnterNetns(t) {
		if out, err := exec.Command("nft", "list", "tables").CombinedOutput(); err != nil {
			t.Fatalf("nft list tables on the host: %v: %s", err, out)
		} else if strings.Contains(string(out), "varve_chaos") {
			t.Fatalf("the host has the namespace's table:\n%s", out)
		}
		return
	}
	n, _ := newNet(t)
	if _, err := n.Cut(0, 1, false); err != nil {
		t.Fatal(err)
	}
	rules, err := n.Rules()
	if err != nil || !strings.Contains(rules, "ip saddr 127.0.0.1 ip daddr 127.0.0.2 drop") {
		t.Fatalf("no drop rule in the namespace (%v):\n%s", err, rules)
	}
}

// Outside a namespace of its own a Net refuses to touch the host's
// rules.
func TestNetRefusesTheHostNamespace(t *testing.T) {
	if os.Getenv("VARVE_CHAOS_NETNS") != "" {
		t.Skip("runs on the host only")
	}
	if _, err := chaos.NewNet(hosts...); !errors.Is(err, chaos.ErrHostNetns) {
		t.Fatalf("NewNet on the host: %v", err)
	}
}

// The harness end to end: three varve server processes on 127.0.0.1-3
// of the test's namespace; a cut through the Runner's NetCut keeps
// node 0's host from node 1's listener while node 2's still reaches
// it; a schedule of a kill, a pause and a clean restart leaves every
// node serving. (Kafka: a partition and process faults, as Jepsen
// applies them.)
func TestClusterUnderFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three varve server processes")
	}
	if !chaos.EnterNetns(t) {
		return
	}
	dir := t.TempDir()
	bin, err := chaos.BuildVarve(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := chaos.StartCluster(localcluster.Options{Dir: filepath.Join(dir, "cluster"), Binary: bin, LogLevel: "warn"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}()
	node1 := c.Local.Node(2).Addr()
	r := c.Runner(chaos.NewHistory())
	heal, err := r.Cut(0, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if reaches(t, hosts[0], node1) || !reaches(t, hosts[2], node1) {
		t.Fatal("the cut does not separate node 0 from node 1 alone")
	}
	if err := heal(); err != nil {
		t.Fatal(err)
	}
	s := chaos.Schedule{Faults: []chaos.Fault{
		{Kind: chaos.Kill, Node: 0, Hold: 100 * time.Millisecond},
		{Kind: chaos.Pause, Node: 1, Hold: 100 * time.Millisecond},
		{Kind: chaos.Restart, Node: 2},
		{Kind: chaos.Cut, Node: 2, Peer: 0, OneWay: true, Hold: 100 * time.Millisecond},
	}}
	if err := r.Run(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if got := len(r.History.Events()); got != 8 {
		t.Fatalf("%d events noted, want 8: %v", got, r.History.Events())
	}
	for i, n := range c.Local.Nodes() {
		if !n.Running() || !reaches(t, hosts[(i+1)%3], n.Addr()) {
			t.Fatalf("%s does not serve after the faults", n.Name())
		}
	}
}
