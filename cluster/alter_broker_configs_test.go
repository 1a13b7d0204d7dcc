package cluster_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Kafka: deleting a dynamic broker setting that is not set succeeds and
// changes nothing (ConfigurationControlManager writes no record).
// kafka-reassign-partitions --verify deletes every broker's replication
// throttle rates that way once a reassignment is done, and stops with
// the error it gets. Setting a rate, then deleting it, puts it back to
// Kafka's default, unbounded (KIP-73).
func TestAlterBrokerConfigsDeleteIsANoOp(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	adm := kadm.NewClient(client(t, b.addr))
	del := []kadm.AlterConfig{
		{Op: kadm.DeleteConfig, Name: "leader.replication.throttled.rate"},
		{Op: kadm.DeleteConfig, Name: "follower.replication.throttled.rate"},
	}
	for _, brokers := range [][]int32{nil, {1}} { // the cluster default, then node 1
		resps, err := adm.AlterBrokerConfigs(ctx(t), del, brokers...)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resps {
			if r.Err != nil {
				t.Errorf("delete on broker resource %q: %v", r.Name, r.Err)
			}
		}
	}
	set := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "leader.replication.throttled.rate", Value: kadm.StringPtr("1000")}}
	resps, err := adm.AlterBrokerConfigs(ctx(t), set, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(resps) != 1 || resps[0].Err != nil {
		t.Fatalf("SET on a broker resource: %+v, want it applied", resps)
	}
	if c, _ := brokerConfig(t, adm, "leader.replication.throttled.rate", 1); c.Value == nil || *c.Value != "1000" {
		t.Errorf("leader.replication.throttled.rate after SET: %+v, want 1000", c)
	}
	if resps, err := adm.AlterBrokerConfigs(ctx(t), del, 1); err != nil || resps[0].Err != nil {
		t.Fatalf("delete the rate: %v %+v", err, resps)
	}
	if c, _ := brokerConfig(t, adm, "leader.replication.throttled.rate", 1); c.Value == nil || *c.Value != "9223372036854775807" {
		t.Errorf("leader.replication.throttled.rate after DELETE: %+v, want Kafka's default Long.MAX_VALUE", c)
	}
}
