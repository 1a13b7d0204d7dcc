package cluster_test

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Kafka: deleting a dynamic broker setting that is not set succeeds and
// changes nothing (ConfigurationControlManager writes no record).
// kafka-reassign-partitions --verify deletes every broker's replication
// throttle rates that way once a reassignment is done, and stops with
// the error it gets. Varve has no replication throttle, so setting a
// rate is refused (INVALID_REQUEST) rather than stored and ignored.
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
	if len(resps) != 1 || !errors.Is(resps[0].Err, kerr.InvalidRequest) {
		t.Errorf("SET on a broker resource: %+v, want INVALID_REQUEST", resps)
	}
}
