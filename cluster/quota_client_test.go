package cluster

import (
	"testing"
	"time"

	"github.com/varve/varve/metadata"
)

func quotaImage(t *testing.T, vals map[metadata.QuotaEntity]float64) *metadata.Image {
	t.Helper()
	var recs []metadata.Record
	for e, v := range vals {
		recs = append(recs, metadata.ClientQuotaRecord{Entity: e.Data(), Key: "producer_byte_rate", Value: v})
	}
	img, err := metadata.Apply(metadata.New("c"), recs...)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// Kafka: DefaultQuotaCallback's precedence (the "Quotas" section of
// Kafka's documentation): user and client id, user and default client
// id, user, default user and client id, default user and default client
// id, default user, client id, default client id. Each level removed in
// turn exposes the next one, with its sensor.
func TestQuotaResolutionOrder(t *testing.T) {
	u, c, du, dc := metadata.Named("alice"), metadata.Named("app"), metadata.DefaultEntity(), metadata.DefaultEntity()
	levels := []struct {
		e      metadata.QuotaEntity
		sensor quotaSensorKey
	}{
		{metadata.QuotaEntity{User: u, ClientID: c}, quotaSensorKey{"alice", "app"}},
		{metadata.QuotaEntity{User: u, ClientID: dc}, quotaSensorKey{"alice", "app"}},
		{metadata.QuotaEntity{User: u}, quotaSensorKey{user: "alice"}},
		{metadata.QuotaEntity{User: du, ClientID: c}, quotaSensorKey{"alice", "app"}},
		{metadata.QuotaEntity{User: du, ClientID: dc}, quotaSensorKey{"alice", "app"}},
		{metadata.QuotaEntity{User: du}, quotaSensorKey{user: "alice"}},
		{metadata.QuotaEntity{ClientID: c}, quotaSensorKey{clientID: "app"}},
		{metadata.QuotaEntity{ClientID: dc}, quotaSensorKey{clientID: "app"}},
	}
	for first := range levels {
		vals := map[metadata.QuotaEntity]float64{}
		for i := first; i < len(levels); i++ {
			vals[levels[i].e] = float64(100 + i)
		}
		// Other users' and clients' values never apply.
		vals[metadata.QuotaEntity{User: metadata.Named("bob")}] = 1
		vals[metadata.QuotaEntity{ClientID: metadata.Named("other")}] = 1
		bound, sensor, ok := resolveQuota(quotaImage(t, vals), "producer_byte_rate", "alice", "app")
		if !ok || bound != float64(100+first) || sensor != levels[first].sensor {
			t.Errorf("from level %d (%s): bound %v sensor %+v ok %v, want %v %+v", first, levels[first].e, bound, sensor, ok, 100+first, levels[first].sensor)
		}
	}
	if _, _, ok := resolveQuota(quotaImage(t, nil), "producer_byte_rate", "alice", "app"); ok {
		t.Error("a quota without any entity")
	}
}

// Kafka: Rate over SampledStat, and QuotaUtils.throttleTime. A new
// sensor's rate is measured over at least (samples-1) windows; over the
// bound B at rate R the throttle is (R-B)/B times that window; within
// it, none. Each client id with a default quota has its own sensor.
func TestClientQuotaThrottleTime(t *testing.T) {
	now := time.Unix(1000, 0)
	m := newClientQuotaManager("producer_byte_rate", 11, time.Second, func() time.Time { return now })
	img := quotaImage(t, map[metadata.QuotaEntity]float64{{ClientID: metadata.DefaultEntity()}: 1000})
	// 10 windows of 1000 B/s allow 10000 bytes at once.
	if d := m.record(img, func() string { return "u" }, "a", 10000); d != 0 {
		t.Fatalf("within the quota: throttle %v", d)
	}
	// 20000 bytes over 10 s is 2000 B/s: (2000-1000)/1000 * 10 s.
	if d := m.record(img, func() string { return "u" }, "a", 10000); d != 10*time.Second {
		t.Fatalf("twice the quota: throttle %v, want 10s", d)
	}
	if d := m.record(img, func() string { return "u" }, "b", 5000); d != 0 {
		t.Fatalf("another client id shares the first one's sensor: throttle %v", d)
	}
	// After the whole window (11 s) the samples are obsolete.
	now = now.Add(12 * time.Second)
	if d := m.record(img, func() string { return "u" }, "a", 5000); d != 0 {
		t.Fatalf("after the window: throttle %v", d)
	}
	// A huge request is throttled for the whole window at most.
	if d := m.record(img, func() string { return "u" }, "a", 1e9); d != 11*time.Second {
		t.Fatalf("huge request: throttle %v, want the 11 s window", d)
	}
	// No quota: nothing measured.
	if d := m.record(quotaImage(t, nil), func() string { return "u" }, "a", 1e12); d != 0 {
		t.Fatalf("no quota: throttle %v", d)
	}
}
