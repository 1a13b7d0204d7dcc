package fetchsession

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
)

// sortKeys orders keys by topic id, topic name, then partition, so that
// a request built from a map reads the same every time.
func sortKeys(ks []Key) {
	slices.SortFunc(ks, func(a, b Key) int {
		if c := bytes.Compare(a.TopicID[:], b.TopicID[:]); c != 0 {
			return c
		}
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
}
