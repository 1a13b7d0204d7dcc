package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/metadata"
)

// Kafka: KIP-546 through KIP-590. AlterClientQuotas sent to a node that
// is not the active controller reaches it; an accepted entry's values
// reach every node's image, a refused entry gets its own error.
func TestAlterClientQuotasReachesEveryNode(t *testing.T) {
	c := newTestCluster(t, 20<<20)
	leader := c.active(5 * time.Second)
	c.waitUnfenced(10 * time.Second)
	client := c.nodes[(leader+1)%3].Client()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	req := kmsg.NewPtrAlterClientQuotasRequest()
	app := "app"
	for _, typ := range []string{"client-id", "group"} {
		e := kmsg.NewAlterClientQuotasRequestEntry()
		ent := kmsg.NewAlterClientQuotasRequestEntryEntity()
		ent.Type, ent.Name = typ, &app
		op := kmsg.NewAlterClientQuotasRequestEntryOp()
		op.Key, op.Value = "producer_byte_rate", 1<<20
		e.Entity, e.Ops = append(e.Entity, ent), append(e.Ops, op)
		req.Entries = append(req.Entries, e)
	}
	kresp, err := client.Do(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	resp := kresp.(*kmsg.AlterClientQuotasResponse)
	if resp.Entries[0].ErrorCode != 0 || resp.Entries[1].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("answers %+v", resp.Entries)
	}
	c.waitFor(5*time.Second, "the quota on every node", func() bool {
		for _, n := range c.nodes {
			q := n.Publisher().Image().ClientQuotas(metadata.QuotaEntity{ClientID: metadata.Named("app")})
			if q["producer_byte_rate"] != 1<<20 {
				return false
			}
		}
		return true
	})
}
