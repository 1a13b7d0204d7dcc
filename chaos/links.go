package chaos

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"slices"
	"strings"
	"sync"
)

// nftTable is the nft table Net owns: one chain on the input hook whose
// rules drop packets by source and destination address.
const nftTable = "varve_chaos"

// ErrHostNetns is returned by NewNet outside a private network
// namespace: link cuts are for a test's own namespace, never the host.
var ErrHostNetns = errors.New("chaos: link faults need a private network namespace (see EnterNetns)")

// Net cuts the links between nodes, each on its own address, with nft
// rules in the current network namespace. A cut drops every packet from
// one node's address to another's where the kernel receives it (the
// input hook), so a sender sees silence and timeouts, as across a real
// partition, not an error. Cuts may overlap (a link cut twice stays cut
// until both heal). Net is safe for concurrent use.
type Net struct {
	hosts []netip.Addr

	mu struct {
		sync.Mutex
		cut map[link]int // a directed link -> how many cuts hold it
	}
}

// link is traffic from node from to node to.
type link struct{ from, to int }

// NewNet takes node i to be at hosts[i] and creates Net's nft table
// afresh, with no cuts. It refuses to run outside a private network
// namespace (ErrHostNetns).
func NewNet(hosts ...string) (*Net, error) {
	n := &Net{}
	n.mu.cut = map[link]int{}
	for _, h := range hosts {
		a, err := netip.ParseAddr(h)
		if err != nil {
			return nil, fmt.Errorf("chaos: node address: %w", err)
		}
		if len(n.hosts) > 0 && a.Is4() != n.hosts[0].Is4() {
			return nil, fmt.Errorf("chaos: node addresses %s and %s: one family only", n.hosts[0], a)
		}
		n.hosts = append(n.hosts, a)
	}
	if private, err := privateNetns(); err != nil || !private {
		return nil, errors.Join(ErrHostNetns, err)
	}
	// "add" then "delete" removes a table left over, in one transaction
	// with the one that replaces it.
	err := nft(fmt.Sprintf("add table inet %[1]s\ndelete table inet %[1]s\n"+
		"add table inet %[1]s\nadd chain inet %[1]s links { type filter hook input priority filter; policy accept; }\n", nftTable))
	return n, err
}

// Cut drops traffic from node from to node to, and back unless oneWay,
// until heal. It is a NetCut. A one-way cut of TCP stalls both
// directions' connections (acknowledgements cannot come back) but lets
// datagrams through the other way.
func (n *Net) Cut(from, to int, oneWay bool) (heal func() error, err error) {
	links := []link{{from, to}}
	if !oneWay {
		links = append(links, link{to, from})
	}
	return n.cut(links)
}

// Isolate cuts node from every other node, both ways.
func (n *Net) Isolate(node int) (heal func() error, err error) { return n.Split(node) }

// Split partitions the nodes in two: side and the rest, with every link
// between the two cut both ways (a majority/minority split of a quorum).
func (n *Net) Split(side ...int) (heal func() error, err error) {
	var links []link
	for a := range n.hosts {
		for b := range n.hosts {
			if slices.Contains(side, a) && !slices.Contains(side, b) {
				links = append(links, link{a, b}, link{b, a})
			}
		}
	}
	return n.cut(links)
}

func (n *Net) cut(links []link) (func() error, error) {
	for _, l := range links {
		if l.from < 0 || l.from >= len(n.hosts) || l.to < 0 || l.to >= len(n.hosts) || l.from == l.to {
			return nil, fmt.Errorf("chaos: no link from node %d to node %d", l.from, l.to)
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, l := range links {
		n.mu.cut[l]++
	}
	if err := n.applyLocked(); err != nil {
		return nil, err
	}
	var once sync.Once
	return func() (err error) {
		once.Do(func() { err = n.heal(links) })
		return err
	}, nil
}

func (n *Net) heal(links []link) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, l := range links {
		if n.mu.cut[l]--; n.mu.cut[l] <= 0 {
			delete(n.mu.cut, l)
		}
	}
	return n.applyLocked()
}

// HealAll heals every cut (their heal functions then do nothing more).
func (n *Net) HealAll() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	clear(n.mu.cut)
	return n.applyLocked()
}

// applyLocked replaces the chain's rules with one drop per cut link, in
// one nft transaction. REQUIRES: n.mu held.
func (n *Net) applyLocked() error {
	links := make([]link, 0, len(n.mu.cut))
	for l := range n.mu.cut {
		links = append(links, l)
	}
	slices.SortFunc(links, func(a, b link) int { return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to)) })
	var b strings.Builder
	fmt.Fprintf(&b, "flush chain inet %s links\n", nftTable)
	family := "ip"
	if len(n.hosts) > 0 && n.hosts[0].Is6() {
		family = "ip6"
	}
	for _, l := range links {
		fmt.Fprintf(&b, "add rule inet %[1]s links %[2]s saddr %[3]s %[2]s daddr %[4]s drop\n", nftTable, family, n.hosts[l.from], n.hosts[l.to])
	}
	return nft(b.String())
}

// Rules lists Net's nft table as nft prints it.
func (n *Net) Rules() (string, error) {
	out, err := exec.Command("nft", "list", "table", "inet", nftTable).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("nft list table: %w: %s", err, out)
	}
	return string(out), nil
}

// Close heals every cut and deletes Net's table.
func (n *Net) Close() error {
	return nft(fmt.Sprintf("delete table inet %s\n", nftTable))
}

// nft runs script as one nft transaction (nft -f -).
func nft(script string) error {
	cmd := exec.Command("nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft: %w: %s\nscript:\n%s", err, out, script)
	}
	return nil
}
