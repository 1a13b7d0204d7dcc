// Package kuuid makes Kafka's random Uuids (org.apache.kafka.common.Uuid):
// the ids of clusters, topics, ACLs and log directories.
//
// Random is Kafka's Uuid.randomUuid: a version 4, variant 2 UUID that is
// none of Kafka's reserved ids (zero and one, which a version 4 UUID can
// never be) and whose string form, URL-safe base64 without padding, does
// not start with '-'. Kafka rejects that last case because such an id
// reads as an option on a command line: `kafka-storage format -t -Xy...`
// fails, and about one random id in 64 would.
//
// Safe for concurrent use; it reads crypto/rand, which does not fail.
package kuuid

import (
	"crypto/rand"
	"encoding/base64"
)

// Random returns a new random Uuid.
func Random() [16]byte {
	for {
		var id [16]byte
		rand.Read(id[:])          // never fails (crypto/rand, Go 1.24+)
		id[6] = id[6]&0x0f | 0x40 // version 4
		id[8] = id[8]&0x3f | 0x80 // IETF variant
		if String(id)[0] != '-' {
			return id
		}
	}
}

// String is Kafka's Uuid.toString: URL-safe base64 without padding,
// 22 characters.
func String(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }
