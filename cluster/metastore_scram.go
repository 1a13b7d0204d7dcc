package cluster

import (
	"github.com/varve/varve/metadata"
)

// scramMeta is one SCRAM credential in a single node's metadata file:
// the salt, iteration count and RFC 5802's stored and server keys,
// never a password. The byte fields are base64 in the JSON.
type scramMeta struct {
	User       string `json:"user"`
	Mechanism  string `json:"mechanism"` // SCRAM-SHA-256 or SCRAM-SHA-512
	Salt       []byte `json:"salt"`
	StoredKey  []byte `json:"stored_key"`
	ServerKey  []byte `json:"server_key"`
	Iterations int32  `json:"iterations"`
}

// scramMetas are img's credentials as the file holds them.
func scramMetas(img *metadata.Image) []scramMeta {
	var out []scramMeta
	for _, k := range img.ScramKeys() {
		c, _ := img.ScramCredential(k.User, k.Mechanism)
		out = append(out, scramMeta{User: k.User, Mechanism: k.Mechanism.String(), Salt: c.Salt,
			StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations})
	}
	return out
}

// scramRecords are the records of the file's credentials.
func scramRecords(creds []scramMeta) []metadata.Record {
	recs := make([]metadata.Record, 0, len(creds))
	for _, c := range creds {
		recs = append(recs, metadata.UserScramCredentialRecord{Name: c.User, Mechanism: metadata.ScramMechanismNamed(c.Mechanism),
			Salt: c.Salt, StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations})
	}
	return recs
}
