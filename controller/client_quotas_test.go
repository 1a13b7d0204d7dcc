package controller

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/metadata"
)

func qent(parts ...string) []metadata.QuotaEntityData {
	var out []metadata.QuotaEntityData
	for i := 0; i+1 < len(parts); i += 2 {
		d := metadata.QuotaEntityData{Type: parts[i]}
		if parts[i+1] != "<default>" {
			n := parts[i+1]
			d.Name = &n
		}
		out = append(out, d)
	}
	return out
}

// Kafka: KIP-546, ClientQuotaControlManager.alterClientQuotas. Accepted
// entries become ClientQuotaRecords and are in the image; each refused
// entry gets INVALID_REQUEST with Kafka's reason and changes nothing;
// validateOnly changes nothing.
func TestAlterClientQuotas(t *testing.T) {
	c := New(DefaultConfig(), metadata.New("c"), 0, 0)
	set := func(k string, v float64) QuotaOp { return QuotaOp{Key: k, Value: v} }
	alts := []QuotaAlteration{
		{Entity: qent("client-id", "app"), Ops: []QuotaOp{set(QuotaProducerByteRate, 1<<20)}},
		{Entity: qent("user", "alice", "client-id", "<default>"), Ops: []QuotaOp{set(QuotaRequestPercentage, 12.5), set(QuotaConsumerByteRate, 2048)}},
		{Entity: nil, Ops: []QuotaOp{set(QuotaProducerByteRate, 1)}},
		{Entity: qent("user", "a", "user", "b"), Ops: []QuotaOp{set(QuotaProducerByteRate, 1)}},
		{Entity: qent("group", "g"), Ops: []QuotaOp{set(QuotaProducerByteRate, 1)}},
		{Entity: qent("ip", "10.0.0.1"), Ops: []QuotaOp{set("connection_creation_rate", 1)}},
		{Entity: qent("user", ""), Ops: []QuotaOp{set(QuotaProducerByteRate, 1)}},
		{Entity: qent("user", "bob"), Ops: []QuotaOp{set("fetch_rate", 1)}},
		{Entity: qent("user", "bob"), Ops: []QuotaOp{set(QuotaProducerByteRate, 0)}},
		{Entity: qent("user", "bob"), Ops: []QuotaOp{set(QuotaProducerByteRate, 1.5)}},
		{Entity: qent("user", "bob"), Ops: []QuotaOp{set(QuotaControllerMutationRate, 1.5), set(QuotaProducerByteRate, -1)}},
	}
	wantMsg := []string{"", "", "empty client quota entity", "duplicate entity entry user", "unhandled client quota entity type: group",
		"ip quota entities", "empty user not supported", "invalid configuration key fetch_rate",
		"must be greater than 0", "cannot be a fractional value", "must be greater than 0"}
	if _, errs, err := c.AlterClientQuotas(alts, true); err != nil || errs[0] != nil || len(c.Image().QuotaEntities()) != 0 {
		t.Fatalf("validateOnly: %v, %v, entities %v", errs, err, c.Image().QuotaEntities())
	}
	_, errs, err := c.AlterClientQuotas(alts, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range wantMsg {
		switch {
		case want == "" && errs[i] != nil:
			t.Errorf("entry %d: %v", i, errs[i])
		case want != "" && (!errors.Is(errs[i], kerr.InvalidRequest) || !strings.Contains(errs[i].Error(), want)):
			t.Errorf("entry %d: err %v, want INVALID_REQUEST with %q", i, errs[i], want)
		}
	}
	img := c.Image()
	if got := img.ClientQuotas(metadata.QuotaEntity{ClientID: metadata.Named("app")}); got[QuotaProducerByteRate] != 1<<20 {
		t.Errorf("app: %v", got)
	}
	alice := metadata.QuotaEntity{User: metadata.Named("alice"), ClientID: metadata.DefaultEntity()}
	if got := img.ClientQuotas(alice); got[QuotaRequestPercentage] != 12.5 || got[QuotaConsumerByteRate] != 2048 {
		t.Errorf("alice: %v", got)
	}
	if n := len(img.QuotaEntities()); n != 2 {
		t.Errorf("%d entities, want 2 (refused entries change nothing): %v", n, img.QuotaEntities())
	}
	// Removing a value the entity lacks, or setting one to what it is,
	// writes nothing; removing the last value removes the entity.
	recs, errs := PlanClientQuotas(img, []QuotaAlteration{
		{Entity: qent("client-id", "app"), Ops: []QuotaOp{{Key: QuotaConsumerByteRate, Remove: true}, set(QuotaProducerByteRate, 1<<20)}}})
	if errs[0] != nil || len(recs) != 0 {
		t.Fatalf("no-op entry: records %v, err %v", recs, errs[0])
	}
	if _, errs, err := c.AlterClientQuotas([]QuotaAlteration{{Entity: qent("client-id", "app"), Ops: []QuotaOp{{Key: QuotaProducerByteRate, Remove: true}}}}, false); err != nil || errs[0] != nil {
		t.Fatal(errs, err)
	}
	if c.Image().ClientQuotas(metadata.QuotaEntity{ClientID: metadata.Named("app")}) != nil {
		t.Error("app still has quotas after its only value was removed")
	}
}
