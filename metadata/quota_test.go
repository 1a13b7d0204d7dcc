package metadata

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// genClientQuota draws a record of a valid entity (user, client id, both,
// or an IP, each named or default) and a key from a small set, so that
// steps of a generated image set and remove the same values.
func genClientQuota(t *rapid.T) Record {
	name := func(label string) *string {
		if rapid.Bool().Draw(t, label+"-default") {
			return nil
		}
		n := rapid.SampledFrom([]string{"alice", "bob", "", "10.0.0.1"}).Draw(t, label)
		return &n
	}
	var ent []QuotaEntityData
	switch rapid.IntRange(0, 3).Draw(t, "entity") {
	case 0:
		ent = []QuotaEntityData{{Type: QuotaEntityUser, Name: name("user")}}
	case 1:
		ent = []QuotaEntityData{{Type: QuotaEntityClientID, Name: name("client")}}
	case 2:
		ent = []QuotaEntityData{{Type: QuotaEntityUser, Name: name("user")}, {Type: QuotaEntityClientID, Name: name("client")}}
	default:
		ent = []QuotaEntityData{{Type: QuotaEntityIP, Name: name("ip")}}
	}
	return ClientQuotaRecord{Entity: ent,
		Key:    rapid.SampledFrom([]string{"producer_byte_rate", "consumer_byte_rate", "request_percentage"}).Draw(t, "key"),
		Value:  rapid.Float64Range(0, 1e12).Draw(t, "value"),
		Remove: rapid.IntRange(0, 3).Draw(t, "remove") == 0}
}

func init() {
	// The codec's round-trip, truncation and entry tests cover it too.
	recordGens["ClientQuotaRecord"] = genClientQuota
}

// Kafka: ClientQuotaRecord.json (api key 14), version 0, flexible: a
// compact array of (EntityType, nullable EntityName, tags), Key, a
// float64 Value, a bool Remove, tags.
func TestClientQuotaRecordBytes(t *testing.T) {
	alice := "alice"
	rec := ClientQuotaRecord{Entity: []QuotaEntityData{{Type: "user", Name: &alice}, {Type: "client-id"}},
		Key: "producer_byte_rate", Value: 1 << 20}
	want, _ := hex.DecodeString(strings.ReplaceAll("01 0e 00  03  05 75736572 06 616c696365 00  0a 636c69656e742d6964 00 00"+
		"  13 70726f64756365725f627974655f72617465  4130000000000000  00  00", " ", ""))
	got := AppendRecord(nil, rec)
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendRecord:\n got %x\nwant %x", got, want)
	}
	back, err := DecodeRecord(got)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(Record(rec), back); d != "" {
		t.Fatalf("DecodeRecord (-want +got):\n%s", d)
	}
	// A null entity array, which the schema does not allow.
	if _, err := DecodeRecord([]byte{1, 0x0e, 0, 0, 1, 'k', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}); !errors.Is(err, ErrCorruptRecord) {
		t.Fatalf("null entity: err = %v, want ErrCorruptRecord", err)
	}
}

func quotaRec(user, client *string, key string, v float64, remove bool) ClientQuotaRecord {
	var ent []QuotaEntityData
	if user != nil {
		u := *user
		if u == "<default>" {
			ent = append(ent, QuotaEntityData{Type: QuotaEntityUser})
		} else {
			ent = append(ent, QuotaEntityData{Type: QuotaEntityUser, Name: &u})
		}
	}
	if client != nil {
		c := *client
		if c == "<default>" {
			ent = append(ent, QuotaEntityData{Type: QuotaEntityClientID})
		} else {
			ent = append(ent, QuotaEntityData{Type: QuotaEntityClientID, Name: &c})
		}
	}
	return ClientQuotaRecord{Entity: ent, Key: key, Value: v, Remove: remove}
}

// Kafka: ClientQuotaControlManager.replay. A value replaces the key's
// previous one, a removal drops it, an entity without values is gone;
// the image before the change is untouched. Entities of unknown types,
// with a type twice, or empty, are refused.
func TestApplyClientQuotas(t *testing.T) {
	img, err := Apply(New("c"),
		quotaRec(ptr("alice"), nil, "producer_byte_rate", 100, false),
		quotaRec(ptr("alice"), ptr("<default>"), "consumer_byte_rate", 5, false),
		quotaRec(nil, ptr("app"), "producer_byte_rate", 7, false),
		quotaRec(ptr("alice"), nil, "producer_byte_rate", 200, false))
	if err != nil {
		t.Fatal(err)
	}
	alice := QuotaEntity{User: Named("alice")}
	if got := img.ClientQuotas(alice)["producer_byte_rate"]; got != 200 {
		t.Fatalf("alice's producer_byte_rate = %v, want 200", got)
	}
	want := []QuotaEntity{{ClientID: Named("app")}, alice, {User: Named("alice"), ClientID: DefaultEntity()}}
	if d := cmp.Diff(want, img.QuotaEntities()); d != "" {
		t.Fatalf("entities (-want +got):\n%s", d)
	}
	next, err := Apply(img, quotaRec(nil, ptr("app"), "producer_byte_rate", 0, true))
	if err != nil {
		t.Fatal(err)
	}
	if next.ClientQuotas(QuotaEntity{ClientID: Named("app")}) != nil || len(next.QuotaEntities()) != 2 {
		t.Fatalf("removal left %v", next.QuotaEntities())
	}
	if img.ClientQuotas(QuotaEntity{ClientID: Named("app")}) == nil {
		t.Fatal("the previous image changed")
	}
	for _, bad := range []ClientQuotaRecord{
		{Entity: []QuotaEntityData{{Type: "group", Name: ptr("g")}}, Key: "k"},
		{Entity: []QuotaEntityData{{Type: "user"}, {Type: "user", Name: ptr("x")}}, Key: "k"},
		{Key: "producer_byte_rate"},
		{Entity: []QuotaEntityData{{Type: "user"}}},
	} {
		if _, err := Apply(img, bad); !errors.Is(err, ErrInvalidRecord) {
			t.Errorf("%+v: err = %v, want ErrInvalidRecord", bad, err)
		}
	}
	if s := (QuotaEntity{User: Named("alice"), ClientID: DefaultEntity()}).String(); s != "user=alice, client-id=<default>" {
		t.Errorf("String = %q", s)
	}
}
