package acl

import (
	"fmt"
	"testing"
)

// BenchmarkAuthorize decides one request against n ACLs: a third
// LITERAL, a third PREFIXED, a third on groups, over distinct names, so
// that the topic looked up has a literal ACL, several prefixed ones on
// its prefixes and many neighbours in the index.
//
//	go test -run XXX -bench Authorize ./acl
func BenchmarkAuthorize(b *testing.B) {
	for _, n := range []int{10, 1_000, 100_000} {
		b.Run(fmt.Sprintf("acls=%d", n), func(b *testing.B) {
			a := NewAuthorizer(Config{})
			a.Store(NewSnapshot(benchACLs(n)))
			name := fmt.Sprintf("team-%05d-orders", n/2)
			if !a.Authorize("User:u7", "10.0.0.1", OpWrite, ResourceTopic, name) {
				b.Fatal("the benchmark's request is denied")
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				a.Authorize("User:u7", "10.0.0.1", OpWrite, ResourceTopic, name)
			}
		})
	}
}

func benchACLs(n int) []Entry {
	acls := make([]Entry, 0, n)
	for i := range n {
		team := fmt.Sprintf("team-%05d", i)
		switch i % 3 {
		case 0:
			acls = append(acls, allow(ResourceTopic, PatternLiteral, team+"-orders", fmt.Sprintf("User:u%d", i%10), OpRead))
		case 1:
			acls = append(acls, allow(ResourceTopic, PatternPrefixed, team, fmt.Sprintf("User:u%d", i%10), OpWrite))
		default:
			acls = append(acls, allow(ResourceGroup, PatternPrefixed, team, fmt.Sprintf("User:u%d", i%10), OpRead))
		}
	}
	// The request's own ACLs: one literal, prefixes of its name.
	name := fmt.Sprintf("team-%05d-orders", n/2)
	acls = append(acls,
		allow(ResourceTopic, PatternLiteral, name, "User:u7", OpRead),
		allow(ResourceTopic, PatternPrefixed, "team-", "User:u7", OpWrite),
		allow(ResourceTopic, PatternPrefixed, name[:8], "User:u8", OpWrite))
	return acls
}
