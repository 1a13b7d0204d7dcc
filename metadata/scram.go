package metadata

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// SCRAM credentials (KIP-554): each user's salted and hashed password
// per mechanism, as Kafka's ScramControlManager keeps them in the
// metadata. The password itself is never in the metadata: a credential
// is RFC 5802's salt, iteration count, StoredKey and ServerKey, which let
// a server check a client's proof and prove itself, and nothing more.

// ScramMechanism is Kafka's ScramMechanism type byte.
type ScramMechanism int8

// Kafka's SCRAM mechanisms (ScramMechanism.type()).
const (
	ScramUnknown ScramMechanism = 0
	ScramSHA256  ScramMechanism = 1
	ScramSHA512  ScramMechanism = 2
)

// String is the mechanism's SASL name, as Kafka's mechanismName.
func (m ScramMechanism) String() string {
	switch m {
	case ScramSHA256:
		return "SCRAM-SHA-256"
	case ScramSHA512:
		return "SCRAM-SHA-512"
	}
	return "UNKNOWN"
}

// ScramMechanismNamed is the mechanism whose SASL name is name,
// ScramUnknown for another name.
func ScramMechanismNamed(name string) ScramMechanism {
	switch name {
	case "SCRAM-SHA-256":
		return ScramSHA256
	case "SCRAM-SHA-512":
		return ScramSHA512
	}
	return ScramUnknown
}

// UserScramCredentialRecord sets one user's credential for one
// mechanism, replacing any it had. Kafka: UserScramCredentialRecord
// (api key 11).
type UserScramCredentialRecord struct {
	Name       string
	Mechanism  ScramMechanism
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

// RemoveUserScramCredentialRecord removes one user's credential for one
// mechanism. Kafka: RemoveUserScramCredentialRecord (api key 22).
type RemoveUserScramCredentialRecord struct {
	Name      string
	Mechanism ScramMechanism
}

func (UserScramCredentialRecord) isRecord()       {}
func (RemoveUserScramCredentialRecord) isRecord() {}

// ScramKey names a credential: a user and a mechanism.
type ScramKey struct {
	User      string
	Mechanism ScramMechanism
}

// ScramCredential is a user's credential for a mechanism. Its slices
// are shared between images and must not be modified.
type ScramCredential struct {
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

// ScramCredential returns user's credential for mech.
func (img *Image) ScramCredential(user string, mech ScramMechanism) (ScramCredential, bool) {
	c, ok := img.scram[ScramKey{user, mech}]
	return c, ok
}

// ScramKeys returns every credential's key, by user then mechanism.
func (img *Image) ScramKeys() []ScramKey {
	return slices.SortedFunc(maps.Keys(img.scram), func(a, b ScramKey) int {
		if c := strings.Compare(a.User, b.User); c != 0 {
			return c
		}
		return int(a.Mechanism) - int(b.Mechanism)
	})
}

// scramCredential replays a UserScramCredentialRecord, as Kafka's
// ScramControlManager.replay: the credential replaces the user's
// previous one for the mechanism.
func (d *delta) scramCredential(r UserScramCredentialRecord) error {
	if r.Name == "" || (r.Mechanism != ScramSHA256 && r.Mechanism != ScramSHA512) || r.Iterations <= 0 {
		return fmt.Errorf("%w: SCRAM credential of user %q mechanism %d with %d iterations", ErrInvalidRecord, r.Name, r.Mechanism, r.Iterations)
	}
	d.ownScram()
	d.next.scram[ScramKey{r.Name, r.Mechanism}] = ScramCredential{Salt: slices.Clone(r.Salt),
		StoredKey: slices.Clone(r.StoredKey), ServerKey: slices.Clone(r.ServerKey), Iterations: r.Iterations}
	return nil
}

// removeScramCredential replays a RemoveUserScramCredentialRecord. As
// Kafka's replay, removing a credential that does not exist is an
// error: the controller never writes one.
func (d *delta) removeScramCredential(r RemoveUserScramCredentialRecord) error {
	k := ScramKey{r.Name, r.Mechanism}
	if _, ok := d.next.scram[k]; !ok {
		return fmt.Errorf("%w: removal of SCRAM credential of user %q mechanism %d, which does not exist", ErrInvalidRecord, r.Name, r.Mechanism)
	}
	d.ownScram()
	delete(d.next.scram, k)
	return nil
}

// ownScram copies the base image's credentials on the delta's first
// change of them.
func (d *delta) ownScram() {
	if !d.scramOwned {
		d.next.scram, d.scramOwned = maps.Clone(d.base.scram), true
		if d.next.scram == nil {
			d.next.scram = map[ScramKey]ScramCredential{}
		}
	}
}

// appendScramRecords writes the image's credentials, by user then
// mechanism (Kafka's ScramImage.write).
func appendScramRecords(recs []Record, img *Image) []Record {
	for _, k := range img.ScramKeys() {
		c := img.scram[k]
		recs = append(recs, UserScramCredentialRecord{Name: k.User, Mechanism: k.Mechanism,
			Salt: c.Salt, StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations})
	}
	return recs
}
