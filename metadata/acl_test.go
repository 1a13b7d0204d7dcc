package metadata

import (
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

func init() {
	recordGens["AccessControlEntryRecord"] = func(t *rapid.T) Record {
		var id [16]byte
		copy(id[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, "id"))
		return AccessControlEntryRecord{ID: id, ResourceType: rapid.Int8().Draw(t, "rt"), ResourceName: rapid.String().Draw(t, "name"),
			PatternType: rapid.Int8().Draw(t, "pt"), Principal: rapid.String().Draw(t, "principal"), Host: rapid.String().Draw(t, "host"),
			Operation: rapid.Int8().Draw(t, "op"), PermissionType: rapid.Int8().Draw(t, "perm")}
	}
	recordGens["RemoveAccessControlEntryRecord"] = func(t *rapid.T) Record {
		var id [16]byte
		copy(id[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, "id"))
		return RemoveAccessControlEntryRecord{ID: id}
	}
}

func aclID(n byte) [16]byte { return [16]byte{15: n} }

// Kafka: AccessControlEntryRecord.json (api key 18) and
// RemoveAccessControlEntryRecord.json (api key 19), version 0, flexible:
// the bytes written by hand from the schemas.
func TestACLRecordBytes(t *testing.T) {
	id := aclID(7)
	idHex := hex.EncodeToString(id[:])
	rec := AccessControlEntryRecord{ID: id, ResourceType: 2, ResourceName: "t", PatternType: 3,
		Principal: "User:a", Host: "*", Operation: 3, PermissionType: 3}
	for _, tc := range []struct {
		rec  Record
		want string
	}{
		{rec, "01 12 00 " + idHex + " 02  02 74  03  07 557365723a61  02 2a  03 03  00"},
		{RemoveAccessControlEntryRecord{ID: id}, "01 13 00 " + idHex + " 00"},
	} {
		want, _ := hex.DecodeString(strings.ReplaceAll(tc.want, " ", ""))
		got := AppendRecord(nil, tc.rec)
		if !slices.Equal(got, want) {
			t.Errorf("%T: %x, want %x", tc.rec, got, want)
		}
		back, err := DecodeRecord(want)
		if err != nil || !cmp.Equal(back, tc.rec) {
			t.Errorf("DecodeRecord(%x) = %v, %v", want, back, err)
		}
	}
	if _, err := DecodeRecord(AppendRecord(nil, rec)[:20]); !errors.Is(err, ErrCorruptRecord) {
		t.Errorf("a truncated ACL record: %v", err)
	}
}

// Kafka: AclsDelta: an ACL record adds (or replaces) by id, a removal
// of an id the image does not hold fails; images before a change keep
// their ACLs.
func TestApplyACLs(t *testing.T) {
	a := AccessControlEntryRecord{ID: aclID(1), ResourceType: 2, ResourceName: "t", PatternType: 3, Principal: "User:a", Host: "*", Operation: 3, PermissionType: 3}
	b := a
	b.ID, b.ResourceName = aclID(2), "u"
	img0 := New("c")
	img1, err := Apply(img0, a, b)
	if err != nil {
		t.Fatal(err)
	}
	img2, err := Apply(img1, RemoveAccessControlEntryRecord{ID: aclID(1)})
	if err != nil {
		t.Fatal(err)
	}
	if img0.ACLs().Len() != 0 || img1.ACLs().Len() != 2 || img2.ACLs().Len() != 1 {
		t.Fatalf("ACLs: %d, %d, %d; want 0, 2, 1", img0.ACLs().Len(), img1.ACLs().Len(), img2.ACLs().Len())
	}
	if got, ok := img2.ACLs().Get(aclID(2)); !ok || got != b {
		t.Errorf("img2 ACL 2 = %v, %v", got, ok)
	}
	if _, err := Apply(img2, RemoveAccessControlEntryRecord{ID: aclID(1)}); !errors.Is(err, ErrInvalidRecord) {
		t.Errorf("removing an unknown ACL: %v", err)
	}
	if _, err := Apply(img2, AccessControlEntryRecord{}); !errors.Is(err, ErrInvalidRecord) {
		t.Errorf("an ACL with the zero id: %v", err)
	}
	img3, _ := Apply(img2, TopicRecord{Name: "x", TopicID: TopicID{1}})
	if img3.ACLs() != img2.ACLs() {
		t.Error("a change without ACL records copied the ACLs")
	}
}

// Kafka: AclsImage.write: a snapshot carries the ACLs and rebuilds them.
func TestSnapshotACLs(t *testing.T) {
	a := AccessControlEntryRecord{ID: aclID(3), ResourceType: 3, ResourceName: "g", PatternType: 4, Principal: "User:*", Host: "*", Operation: 2, PermissionType: 2}
	img, err := Apply(New("c"), FeatureLevelRecord{Name: "metadata.version", FeatureLevel: 20}, a)
	if err != nil {
		t.Fatal(err)
	}
	recs := SnapshotRecords(img)
	if last := recs[len(recs)-1]; last != a {
		t.Fatalf("the snapshot ends with %v, want the ACL", last)
	}
	back, err := Apply(New("c"), recs...)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := back.ACLs().Get(a.ID); !ok || got != a || back.ACLs().Len() != 1 {
		t.Errorf("rebuilt ACLs: %v, %v, %d", got, ok, back.ACLs().Len())
	}
}
