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

func genScramCredential(t *rapid.T) Record {
	bs := func(label string) []byte {
		b := rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, label)
		if len(b) == 0 {
			return nil // decoded empty bytes are nil
		}
		return b
	}
	return UserScramCredentialRecord{Name: genString(t, "user"), Mechanism: ScramMechanism(rapid.Int8Range(0, 2).Draw(t, "mechanism")),
		Salt: bs("salt"), StoredKey: bs("stored"), ServerKey: bs("server"), Iterations: rapid.Int32().Draw(t, "iterations")}
}

func init() {
	// The codec's round-trip, truncation and entry tests cover these too.
	recordGens["UserScramCredentialRecord"] = genScramCredential
	recordGens["RemoveUserScramCredentialRecord"] = func(t *rapid.T) Record {
		return RemoveUserScramCredentialRecord{Name: genString(t, "user"), Mechanism: ScramMechanism(rapid.Int8Range(0, 2).Draw(t, "mechanism"))}
	}
}

// Kafka: UserScramCredentialRecord.json (api key 11) and
// RemoveUserScramCredentialRecord.json (api key 22), version 0,
// flexible: compact strings and bytes, an int8 mechanism, tags last.
func TestScramRecordBytes(t *testing.T) {
	tests := []struct {
		name string
		rec  Record
		want string
	}{
		{"UserScramCredentialRecord", UserScramCredentialRecord{Name: "alice", Mechanism: ScramSHA512,
			Salt: []byte{1, 2}, StoredKey: []byte{3}, ServerKey: []byte{4, 5, 6}, Iterations: 4096},
			"01 0b 00  06 616c696365  02  03 0102  02 03  04 040506  00001000  00"},
		{"RemoveUserScramCredentialRecord", RemoveUserScramCredentialRecord{Name: "bob", Mechanism: ScramSHA256},
			"01 16 00  04 626f62  01  00"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, _ := hex.DecodeString(strings.ReplaceAll(tc.want, " ", ""))
			got := AppendRecord(nil, tc.rec)
			if !bytes.Equal(got, want) {
				t.Fatalf("AppendRecord:\n got %x\nwant %x", got, want)
			}
			back, err := DecodeRecord(got)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.rec, back); d != "" {
				t.Fatalf("DecodeRecord (-want +got):\n%s", d)
			}
		})
	}
	// Null bytes where the schema allows none.
	if _, err := DecodeRecord([]byte{1, 0x0b, 0, 2, 'a', 1, 0, 1, 1, 0, 0, 0, 1, 0}); !errors.Is(err, ErrCorruptRecord) {
		t.Fatalf("null salt: err = %v, want ErrCorruptRecord", err)
	}
}

func cred(user string, mech ScramMechanism, salt byte) UserScramCredentialRecord {
	return UserScramCredentialRecord{Name: user, Mechanism: mech, Salt: []byte{salt}, StoredKey: []byte{salt, 1},
		ServerKey: []byte{salt, 2}, Iterations: 4096}
}

// Kafka: ScramControlManager.replay. A credential replaces the user's
// previous one for the mechanism; a removal of a credential that does
// not exist is refused; the image before stays as it was.
func TestApplyScram(t *testing.T) {
	img, err := Apply(New("c"), cred("alice", ScramSHA256, 1), cred("alice", ScramSHA512, 2), cred("bob", ScramSHA256, 3))
	if err != nil {
		t.Fatal(err)
	}
	next, err := Apply(img, cred("alice", ScramSHA256, 9), RemoveUserScramCredentialRecord{Name: "bob", Mechanism: ScramSHA256})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := next.ScramCredential("alice", ScramSHA256); c.Salt[0] != 9 {
		t.Fatalf("alice's SCRAM-SHA-256 salt = %v, want the replacement's", c.Salt)
	}
	if _, ok := next.ScramCredential("bob", ScramSHA256); ok {
		t.Fatal("bob's credential survived its removal")
	}
	want := []ScramKey{{"alice", ScramSHA256}, {"alice", ScramSHA512}, {"bob", ScramSHA256}}
	if d := cmp.Diff(want, img.ScramKeys()); d != "" {
		t.Fatalf("the image before changed (-want +got):\n%s", d)
	}
	if c, _ := img.ScramCredential("alice", ScramSHA256); c.Salt[0] != 1 {
		t.Fatal("the image before sees the replacement")
	}
	for _, bad := range []Record{
		RemoveUserScramCredentialRecord{Name: "bob", Mechanism: ScramSHA256},
		RemoveUserScramCredentialRecord{Name: "alice", Mechanism: ScramUnknown},
		cred("", ScramSHA256, 1),
		cred("carol", ScramUnknown, 1),
		UserScramCredentialRecord{Name: "carol", Mechanism: ScramSHA256},
	} {
		if _, err := Apply(next, bad); !errors.Is(err, ErrInvalidRecord) {
			t.Errorf("Apply(%+v) = %v, want ErrInvalidRecord", bad, err)
		}
	}
}

// Kafka: ScramImage.write. A snapshot keeps the credentials, after
// everything else, and rebuilds them exactly, through their bytes too.
func TestSnapshotKeepsScram(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		img := genImage(t)
		for range rapid.IntRange(0, 20).Draw(t, "scram-steps") {
			user := rapid.SampledFrom([]string{"alice", "bob", "carol"}).Draw(t, "user")
			mech := ScramMechanism(rapid.Int8Range(1, 2).Draw(t, "mech"))
			var r Record = cred(user, mech, rapid.Byte().Draw(t, "salt"))
			if rapid.Bool().Draw(t, "remove") {
				r = RemoveUserScramCredentialRecord{Name: user, Mechanism: mech}
			}
			if next, err := Apply(img, r); err == nil {
				img = next
			}
		}
		recs := SnapshotRecords(img)
		decoded, err := DecodeEntry(AppendEntry(nil, recs))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Apply(New(img.ClusterID()), decoded...)
		if err != nil {
			t.Fatalf("Apply(decoded snapshot): %v", err)
		}
		if d := cmp.Diff(img, got, sameImage); d != "" {
			t.Fatalf("image rebuilt from its snapshot (-want +got):\n%s", d)
		}
		n := len(img.ScramKeys())
		for i, r := range recs[len(recs)-n:] {
			if k := img.ScramKeys()[i]; r.(UserScramCredentialRecord).Name != k.User {
				t.Fatalf("snapshot record %d is %+v, want the credentials last, by user", i, r)
			}
		}
	})
}
