package cluster_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// features asks the broker at addr (with ApiVersions at version) for
// its supported and finalized features, as kafka-features describe does.
func features(t *testing.T, addr string, version int16) (sup map[string][2]int16, fin map[string]int16, epoch int64) {
	t.Helper()
	v := kversion.Stable()
	v.SetMaxKeyVersion(kmsg.ApiVersions.Int16(), version)
	c := client(t, addr, kgo.MaxVersions(v))
	kresp, err := c.SeedBrokers()[0].Request(ctx(t), kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		t.Fatal(err)
	}
	resp := kresp.(*kmsg.ApiVersionsResponse)
	if resp.Version != version {
		t.Fatalf("ApiVersions answered at v%d, asked v%d", resp.Version, version)
	}
	sup, fin = map[string][2]int16{}, map[string]int16{}
	for _, f := range resp.SupportedFeatures {
		sup[f.Name] = [2]int16{f.MinVersion, f.MaxVersion}
	}
	for _, f := range resp.FinalizedFeatures {
		if f.MinVersionLevel != f.MaxVersionLevel {
			t.Errorf("finalized %s: min %d != max %d", f.Name, f.MinVersionLevel, f.MaxVersionLevel)
		}
		fin[f.Name] = f.MaxVersionLevel
	}
	return sup, fin, resp.FinalizedFeaturesEpoch
}

func updateFeature(t *testing.T, adm *kadm.Client, name string, level int16, typ int8) error {
	t.Helper()
	res, err := adm.UpdateFeatures(ctx(t), false, kadm.FeatureUpdate{Feature: name, MaxVersionLevel: level, UpgradeType: typ})
	if err != nil {
		return err
	}
	return res.Error()
}

// Kafka: KIP-584 / KIP-778. A single node starts at metadata.version
// 4.0-IV3 (25) and reports it with the features it supports; a safe
// downgrade that changes no record is finalized, kept in the metadata
// file across a restart, and reported with a newer epoch; what Varve
// does not support, or a downgrade that could lose metadata, is
// INVALID_UPDATE_VERSION.
func TestSingleNodeFeatures(t *testing.T) {
	dir := t.TempDir()
	tb := startBroker(t, dir, nil)
	c := client(t, tb.addr)
	sup, fin, epoch := features(t, tb.addr, 4)
	wantSup := map[string][2]int16{"metadata.version": {22, 25}, "kraft.version": {0, 0},
		"group.version": {0, 1}, "transaction.version": {0, 2}}
	for name, r := range wantSup {
		if sup[name] != r {
			t.Errorf("supported %s: %v, want %v", name, sup[name], r)
		}
	}
	// KIP-848: group.version 1; KIP-890: transaction.version 2, as Kafka 4.x bootstraps them.
	if fin["metadata.version"] != 25 || fin["group.version"] != 1 || fin["transaction.version"] != 2 || len(fin) != 3 || epoch < 1 {
		t.Fatalf("finalized %v epoch %d, want metadata.version 25, group.version 1 and transaction.version 2, epoch >= 1", fin, epoch)
	}
	// Kafka: KAFKA-17011, below v4 a range starting at 0 is left out.
	if sup3, _, _ := features(t, tb.addr, 3); len(sup3) != 1 {
		t.Errorf("v3 supported features %v, want metadata.version alone", sup3)
	}

	adm := kadm.NewClient(c)
	for _, bad := range []struct {
		name  string
		level int16
		typ   int8
	}{{"metadata.version", 24, 1}, {"metadata.version", 22, 2}, {"metadata.version", 22, 3},
		{"metadata.version", 26, 1}, {"group.version", 2, 1}, {"no.such.feature", 1, 1}} {
		if err := updateFeature(t, adm, bad.name, bad.level, bad.typ); err != kerr.InvalidUpdateVersion {
			t.Errorf("update %s to %d (type %d): %v, want INVALID_UPDATE_VERSION", bad.name, bad.level, bad.typ, err)
		}
	}
	if err := updateFeature(t, adm, "metadata.version", 24, 2); err != nil {
		t.Fatalf("safe downgrade to 24: %v", err)
	}
	_, fin, epoch2 := features(t, tb.addr, 4)
	if fin["metadata.version"] != 24 || epoch2 <= epoch {
		t.Fatalf("after the downgrade: %v epoch %d (before %d)", fin, epoch2, epoch)
	}

	tb.stop(t)
	tb = startBroker(t, dir, nil)
	_, fin, epoch3 := features(t, tb.addr, 4)
	if fin["metadata.version"] != 24 || epoch3 <= epoch2 {
		t.Errorf("after a restart: %v epoch %d (before %d), want 24 and a newer epoch", fin, epoch3, epoch2)
	}
}

// Kafka: KIP-584, KIP-590. The first active controller of a new cluster
// writes metadata.version 25; UpdateFeatures sent to any broker is
// forwarded to the active controller, is all or nothing, and every
// node reports the new level; a controller failover keeps it.
func TestClusterFeatures(t *testing.T) {
	tc := startQuorumCluster(t, 3, nil)
	tc.waitBrokers(3)
	level := func(i int) int16 { _, fin, _ := features(t, tc.addrs[i], 4); return fin["metadata.version"] }
	for i := range tc.addrs {
		waitWithin(t, 10*time.Second, "metadata.version 25 on every node", func() bool { return level(i) == 25 })
	}

	adm := kadm.NewClient(client(t, tc.addrs[1]))
	res, err := adm.UpdateFeatures(ctx(t), false,
		kadm.FeatureUpdate{Feature: "metadata.version", MaxVersionLevel: 24, UpgradeType: 2},
		kadm.FeatureUpdate{Feature: "transaction.version", MaxVersionLevel: 3, UpgradeType: 1})
	if err != nil || res.Error() != kerr.InvalidUpdateVersion {
		t.Fatalf("a request with one unsupported update: %v %v, want INVALID_UPDATE_VERSION", err, res.Error())
	}
	// To node 2 itself (kadm would send it to the controller).
	req := kmsg.NewPtrUpdateFeaturesRequest()
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = "metadata.version", 24, 2
	req.FeatureUpdates = append(req.FeatureUpdates, u)
	kresp, err := client(t, tc.addrs[1]).SeedBrokers()[0].Request(ctx(t), req)
	if err != nil || kresp.(*kmsg.UpdateFeaturesResponse).ErrorCode != 0 {
		t.Fatalf("safe downgrade to 24 through node 2: %v %+v", err, kresp)
	}
	if got := level(1); got != 24 {
		t.Errorf("node 2 answered before its image showed the change: %d", got)
	}
	for i := range tc.addrs {
		waitWithin(t, 10*time.Second, "metadata.version 24 on every node", func() bool { return level(i) == 24 })
	}
	for i, b := range tc.nodes {
		if b.IsActiveController() {
			tc.kill(i)
			break
		}
	}
	for i := range tc.nodes {
		if tc.nodes[i] != nil {
			waitWithin(t, 10*time.Second, "a new active controller", func() bool {
				for _, b := range tc.nodes {
					if b != nil && b.IsActiveController() {
						return true
					}
				}
				return false
			})
			if got := level(i); got != 24 {
				t.Errorf("node %d after the controller's loss: metadata.version %d, want 24", i+1, got)
			}
		}
	}
}
