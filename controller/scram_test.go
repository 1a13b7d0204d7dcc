package controller

import (
	"bytes"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/xdg-go/scram"

	"github.com/varve/varve/metadata"
)

func salted(t *testing.T, mech metadata.ScramMechanism, pw string, salt []byte, iters int) []byte {
	h, n := sha256.New, sha256.Size
	if mech == metadata.ScramSHA512 {
		h, n = sha512.New, sha512.Size
	}
	b, err := pbkdf2.Key(h, pw, salt, iters, n)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Kafka: KIP-554. The client sends Hi(password, salt, i); the controller
// records RFC 5802's StoredKey and ServerKey, the same keys a SCRAM
// server derives from the password (xdg-go/scram here), and never the
// salted password itself.
func TestScramUpsertDerivesKeys(t *testing.T) {
	c := New(DefaultConfig(), metadata.New("c"), 0, 0)
	salt := []byte("0123456789abcdef")
	for _, tc := range []struct {
		mech metadata.ScramMechanism
		hash scram.HashGeneratorFcn
	}{{metadata.ScramSHA256, scram.SHA256}, {metadata.ScramSHA512, scram.SHA512}} {
		sp := salted(t, tc.mech, "alice-secret", salt, 8192)
		resp, err := c.AlterUserScramCredentials(nil, []ScramUpsertion{{Name: "alice", Mechanism: int8(tc.mech),
			Iterations: 8192, Salt: salt, SaltedPassword: sp}})
		if err != nil || len(resp.Results) != 1 || resp.Results[0].Err != nil || len(resp.Records) != 1 {
			t.Fatalf("%v: %+v, %v", tc.mech, resp, err)
		}
		client, _ := tc.hash.NewClient("alice", "alice-secret", "")
		want := client.GetStoredCredentials(scram.KeyFactors{Salt: string(salt), Iters: 8192})
		got, ok := c.Image().ScramCredential("alice", tc.mech)
		if !ok || !bytes.Equal(got.StoredKey, want.StoredKey) || !bytes.Equal(got.ServerKey, want.ServerKey) ||
			!bytes.Equal(got.Salt, salt) || got.Iterations != 8192 {
			t.Fatalf("%v: credential %+v, want stored key %x server key %x", tc.mech, got, want.StoredKey, want.ServerKey)
		}
		rec := resp.Records[0].(metadata.UserScramCredentialRecord)
		if bytes.Equal(rec.StoredKey, sp) || bytes.Equal(rec.ServerKey, sp) {
			t.Fatal("the record holds the salted password")
		}
	}
}

// Kafka: ScramControlManager.alterCredentials and its errors, per user;
// the users without an error are changed all the same.
func TestScramAlterErrors(t *testing.T) {
	c := New(DefaultConfig(), metadata.New("c"), 0, 0)
	sp := salted(t, metadata.ScramSHA256, "pw", []byte("s"), 4096)
	up := func(user string, mech int8, iters int32) ScramUpsertion {
		return ScramUpsertion{Name: user, Mechanism: mech, Iterations: iters, Salt: []byte("s"), SaltedPassword: sp}
	}
	if _, err := c.AlterUserScramCredentials(nil, []ScramUpsertion{up("dave", 1, 4096)}); err != nil {
		t.Fatal(err)
	}
	resp, err := c.AlterUserScramCredentials(
		[]ScramDeletion{{Name: "ghost", Mechanism: 1}, {Name: "dave", Mechanism: 1}, {Name: "odd", Mechanism: 3}},
		[]ScramUpsertion{up("low", 1, 4095), up("high", 2, 16385), up("dave", 2, 4096), up("none", 0, 4096),
			up("ok", 2, 16384), up("", 1, 4096), {Name: "empty", Mechanism: 1, Iterations: 4096}})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		user string
		err  error
	}{
		{"ghost", kerr.ResourceNotFound}, {"dave", kerr.DuplicateResource}, {"odd", kerr.UnsupportedSaslMechanism}, {"low", kerr.UnacceptableCredential}, {"high", kerr.UnacceptableCredential},
		{"none", kerr.UnsupportedSaslMechanism}, {"ok", nil}, {"", kerr.UnacceptableCredential}, {"empty", kerr.UnacceptableCredential},
	}
	if len(resp.Results) != len(want) {
		t.Fatalf("results %+v, want %d", resp.Results, len(want))
	}
	for i, w := range want {
		r := resp.Results[i]
		if r.User != w.user || !errors.Is(r.Err, w.err) || (w.err == nil) != (r.Err == nil) {
			t.Errorf("result %d: %s %v, want %s %v", i, r.User, r.Err, w.user, w.err)
		}
	}
	if len(resp.Records) != 1 {
		t.Fatalf("records %+v, want ok's only", resp.Records)
	}
	if _, ok := c.Image().ScramCredential("ok", metadata.ScramSHA512); !ok {
		t.Fatal("ok's credential is not in the controller's image")
	}
	// The duplicate kept dave's deletion from happening; alone, it does.
	if _, ok := c.Image().ScramCredential("dave", metadata.ScramSHA256); !ok {
		t.Fatal("a refused deletion happened")
	}
	resp, _ = c.AlterUserScramCredentials([]ScramDeletion{{Name: "dave", Mechanism: 1}}, nil)
	if resp.Results[0].Err != nil {
		t.Fatal(resp.Results[0].Err)
	}
	if _, ok := c.Image().ScramCredential("dave", metadata.ScramSHA256); ok {
		t.Fatal("dave's credential survived its deletion")
	}
}
