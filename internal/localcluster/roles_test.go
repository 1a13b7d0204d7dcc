package localcluster

import (
	"fmt"
	"strings"
	"testing"

	"github.com/varve/varve/config"
)

// Kafka: dedicated controllers. With Controllers 3 and Nodes 2, nodes
// 1-3 are controller-only voters with the CONTROLLER listener alone,
// nodes 4-5 broker-only learners with PLAINTEXT alone and a learner
// listener; the voters and the bootstrap servers name only their own
// kind, the internal topics' replication is capped by the two brokers,
// and every file parses as a valid configuration.
func TestDedicatedControllersLayout(t *testing.T) {
	c, err := New(Options{Dir: t.TempDir(), BasePort: 9092, Controllers: 3, Nodes: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(); err != nil {
		t.Fatal(err)
	}
	if got, want := c.Voters(), "1@127.0.0.1:9093,2@127.0.0.2:9093,3@127.0.0.3:9093"; got != want {
		t.Errorf("voters %s, want %s", got, want)
	}
	if got, want := c.BootstrapServers(), "127.0.0.4:9092,127.0.0.5:9092"; got != want {
		t.Errorf("bootstrap servers %s, want %s", got, want)
	}
	for _, n := range c.Nodes() {
		b, err := config.ParseFile(n.PropertiesFile(), nil)
		if err != nil {
			t.Fatalf("%s: %v", n.Name(), err)
		}
		var ls []string
		for _, l := range b.Listeners {
			ls = append(ls, l.String())
		}
		got := fmt.Sprintf("roles=%s listeners=%s learner=%s offsets.rf=%d serve=%s", strings.Join(b.ProcessRoles, ","),
			strings.Join(ls, ","), b.QuorumLearnerListener, b.OffsetsTopicReplicationFactor, n.serveAddr())
		want := fmt.Sprintf("roles=controller listeners=CONTROLLER://%s learner= offsets.rf=2 serve=%s", n.ControllerAddr(), n.ControllerAddr())
		if n.ID > 3 {
			want = fmt.Sprintf("roles=broker listeners=PLAINTEXT://%s learner=%s offsets.rf=2 serve=%s", n.Addr(), n.ControllerAddr(), n.Addr())
		}
		if got != want {
			t.Errorf("%s:\n got %s\nwant %s", n.Name(), got, want)
		}
	}
}
