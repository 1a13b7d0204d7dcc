package localcluster

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/varve/varve/config"
)

// Kafka: KIP-631 combined mode. Every node's server.properties is a
// valid KRaft combined-mode configuration (config.ParseFile validates
// roles, voters, controller and advertised listeners): every node is a
// voter reached on its CONTROLLER listener, clients and peers use
// PLAINTEXT, and all share one cluster.id.
func TestPropertiesAreKafkaCombinedMode(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared-host=%v", shared), func(t *testing.T) {
			c, err := New(Options{Dir: t.TempDir(), BasePort: 9092, SharedHost: shared})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Write(); err != nil {
				t.Fatal(err)
			}
			wantVoters := "1@127.0.0.1:9093,2@127.0.0.2:9093,3@127.0.0.3:9093"
			wantBootstrap := "127.0.0.1:9092,127.0.0.2:9092,127.0.0.3:9092"
			if shared {
				wantVoters = "1@127.0.0.1:9093,2@127.0.0.1:9095,3@127.0.0.1:9097"
				wantBootstrap = "127.0.0.1:9092,127.0.0.1:9094,127.0.0.1:9096"
			}
			if got := c.BootstrapServers(); got != wantBootstrap {
				t.Errorf("bootstrap servers %s, want %s", got, wantBootstrap)
			}
			for _, n := range c.Nodes() {
				b, err := config.ParseFile(n.PropertiesFile(), nil)
				if err != nil {
					t.Fatalf("%s: %v", n.Name(), err)
				}
				checkNodeConfig(t, c, n, b, wantVoters)
			}
		})
	}
}

func checkNodeConfig(t *testing.T, c *Cluster, n *Node, b *config.Broker, wantVoters string) {
	t.Helper()
	var voters []string
	for _, v := range b.ControllerQuorumVoters {
		voters = append(voters, v.String())
	}
	var ls []string
	for _, l := range b.Listeners {
		ls = append(ls, l.String())
	}
	got := fmt.Sprintf("node.id=%d roles=%v voters=%s listeners=%s advertised=%v controller=%v inter=%s dirs=%v cluster=%s offsets.rf=%d",
		b.NodeID, b.ProcessRoles, strings.Join(voters, ","), strings.Join(ls, ","), len(b.AdvertisedListeners),
		b.ControllerListenerNames, b.InterBrokerListenerName, b.LogDirs, b.ClusterID, b.OffsetsTopicReplicationFactor)
	want := fmt.Sprintf("node.id=%d roles=[broker controller] voters=%s listeners=PLAINTEXT://%s,CONTROLLER://%s advertised=2 controller=[CONTROLLER] inter=PLAINTEXT dirs=[%s] cluster=%s offsets.rf=3",
		n.ID, wantVoters, n.Addr(), n.ControllerAddr(), n.LogDir(), c.ClusterID)
	if got != want {
		t.Errorf("%s:\n got %s\nwant %s", n.Name(), got, want)
	}
	if p, ok := b.SecurityProtocol("CONTROLLER"); !ok || p != "PLAINTEXT" {
		t.Errorf("%s: CONTROLLER maps to %q", n.Name(), p)
	}
}

// A one-node cluster caps the internal topics' replication at one node,
// as Kafka's single-node server.properties does.
func TestOneNodeCapsInternalReplication(t *testing.T) {
	c, err := New(Options{Nodes: 1, Dir: t.TempDir(), BasePort: 9092})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(); err != nil {
		t.Fatal(err)
	}
	b, err := config.ParseFile(c.Node(1).PropertiesFile(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.OffsetsTopicReplicationFactor != 1 || b.TransactionStateLogReplicationFactor != 1 || b.TransactionStateLogMinIsr != 1 {
		t.Fatalf("offsets rf %d, transactions rf %d min isr %d", b.OffsetsTopicReplicationFactor,
			b.TransactionStateLogReplicationFactor, b.TransactionStateLogMinIsr)
	}
}

// With BasePort 0 every broker and controller port is a free one, no
// two the same on one host.
func TestFreePortsAreDistinct(t *testing.T) {
	for _, shared := range []bool{false, true} {
		c, err := New(Options{Nodes: 4, Dir: t.TempDir(), SharedHost: shared})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, n := range c.Nodes() {
			for _, a := range []string{n.Addr(), n.ControllerAddr()} {
				if strings.HasSuffix(a, ":0") || seen[a] {
					t.Fatalf("shared=%v: address %s zero or taken twice", shared, a)
				}
				seen[a] = true
			}
		}
	}
}

// Extra properties win over the generated ones, in place, and new ones
// follow in key order.
func TestExtraPropertiesWin(t *testing.T) {
	c, err := New(Options{Nodes: 3, Dir: t.TempDir(), BasePort: 9092,
		Props: map[string]string{"offsets.topic.replication.factor": "2", "zeta.x": "1", "alpha.y": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	ps := c.Properties(c.Node(2))
	var keys []string
	for _, p := range ps {
		keys = append(keys, p.Key)
		if p.Key == "offsets.topic.replication.factor" && p.Value != "2" {
			t.Errorf("offsets.topic.replication.factor=%s, want the override 2", p.Value)
		}
	}
	if got := strings.Join(keys[len(keys)-2:], ","); got != "alpha.y,zeta.x" {
		t.Errorf("extra keys end the file as %s", got)
	}
}

// Whatever a value holds (a path with spaces, backslashes, a leading
// '#'), the file reads back as written through Java's properties rules.
func TestPropertiesEscapeRoundTrips(t *testing.T) {
	odd := map[string]string{"a b=c:d": ` lead\back#slash	tab`, "x": "#not a comment", "y": "!nor this", "z": "line\nbreak"}
	c, err := New(Options{Nodes: 1, Dir: filepath.Join(t.TempDir(), "dir with space"), BasePort: 9092, Props: odd})
	if err != nil {
		t.Fatal(err)
	}
	text := c.PropertiesText(c.Node(1))
	got, err := config.ReadProperties(strings.NewReader(string(text)))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Properties(c.Node(1)) {
		if got[p.Key] != p.Value {
			t.Errorf("%q read back as %q, want %q\n%s", p.Key, got[p.Key], p.Value, text)
		}
	}
}

// Kafka: kafka-storage.sh format writes meta.properties version 1 with
// cluster.id, node.id and a directory.id of its own; --ignore-formatted
// leaves a directory formatted for the same cluster and node alone,
// and Kafka will not start on a directory of another cluster.
func TestFormatWritesMetaProperties(t *testing.T) {
	dir := t.TempDir()
	c, err := New(Options{Dir: dir, BasePort: 9092})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(); err != nil {
		t.Fatal(err)
	}
	dirIDs := map[string]bool{}
	for _, n := range c.Nodes() {
		m, err := readMetaProperties(filepath.Join(n.LogDir(), metaPropertiesFile))
		if err != nil {
			t.Fatal(err)
		}
		if m["cluster.id"] != c.ClusterID || m["node.id"] != fmt.Sprint(n.ID) || len(m["directory.id"]) != 22 || dirIDs[m["directory.id"]] {
			t.Fatalf("%s: meta.properties %v", n.Name(), m)
		}
		dirIDs[m["directory.id"]] = true
	}
	first, _ := os.ReadFile(filepath.Join(c.Node(1).LogDir(), metaPropertiesFile))

	again, err := New(Options{Dir: dir, BasePort: 9092})
	if err != nil {
		t.Fatal(err)
	}
	if again.ClusterID != c.ClusterID {
		t.Fatalf("cluster over the same dir got cluster.id %s, want %s", again.ClusterID, c.ClusterID)
	}
	if err := again.Write(); err != nil {
		t.Fatal(err)
	}
	if second, _ := os.ReadFile(filepath.Join(c.Node(1).LogDir(), metaPropertiesFile)); string(second) != string(first) {
		t.Fatalf("formatting again rewrote meta.properties:\n%s\n%s", first, second)
	}

	other, err := New(Options{Dir: dir, BasePort: 9092, ClusterID: "AAAAAAAAAAAAAAAAAAAAAA"})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Write(); err == nil || !strings.Contains(err.Error(), c.ClusterID) {
		t.Fatalf("formatting for another cluster: %v", err)
	}
}

// Kafka: Uuid.randomUuid, as kafka-storage.sh random-uuid prints it: a
// version 4 UUID in URL-safe base64 without padding, never starting
// with '-'.
func TestRandomUUIDIsKafkas(t *testing.T) {
	seen := map[string]bool{}
	for range 2000 {
		s, err := randomUUID()
		if err != nil {
			t.Fatal(err)
		}
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil || len(b) != 16 || b[6]>>4 != 4 || b[8]>>6 != 2 || s[0] == '-' || seen[s] {
			t.Fatalf("uuid %q (%x, %v)", s, b, err)
		}
		seen[s] = true
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, o := range []Options{{Dir: ""}, {Dir: "x", Nodes: 255}, {Dir: "x", Nodes: -1}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}
