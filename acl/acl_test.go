package acl

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func allow(rt ResourceType, pt PatternType, name, principal string, op Operation) Entry {
	return Entry{Binding: Binding{ResourceType: rt, ResourceName: name, PatternType: pt, Principal: principal, Host: "*", Operation: op, Permission: PermissionAllow}}
}

func deny(rt ResourceType, pt PatternType, name, principal string, op Operation) Entry {
	e := allow(rt, pt, name, principal, op)
	e.Permission = PermissionDeny
	return e
}

// Kafka: StandardAuthorizerData.authorize and findResult.
func TestAuthorize(t *testing.T) {
	const alice, bob = "User:alice", "User:bob"
	acls := []Entry{
		allow(ResourceTopic, PatternLiteral, "orders", alice, OpRead),
		allow(ResourceTopic, PatternPrefixed, "pay", alice, OpWrite),
		deny(ResourceTopic, PatternPrefixed, "payroll", alice, OpWrite),
		allow(ResourceTopic, PatternLiteral, "*", bob, OpDescribe),
		allow(ResourceTopic, PatternLiteral, "cfg", alice, OpAlterConfigs),
		deny(ResourceTopic, PatternLiteral, "secret", alice, OpRead),
		allow(ResourceTopic, PatternLiteral, "secret", WildcardPrincipal, OpAll),
		allow(ResourceGroup, PatternLiteral, "g1", alice, OpRead),
		{Binding: Binding{ResourceType: ResourceTopic, ResourceName: "local", PatternType: PatternLiteral, Principal: alice, Host: "10.0.0.1", Operation: OpRead, Permission: PermissionAllow}},
		deny(ResourceTopic, PatternLiteral, "nowrite", alice, OpAll),
		allow(ResourceTopic, PatternLiteral, "nowrite", alice, OpWrite),
	}
	a := NewAuthorizer(Config{SuperUsers: []string{"User:admin"}})
	a.Store(NewSnapshot(acls))
	for _, tc := range []struct {
		principal, host string
		op              Operation
		rt              ResourceType
		name            string
		want            bool
	}{
		{alice, "1.2.3.4", OpRead, ResourceTopic, "orders", true},
		{alice, "1.2.3.4", OpWrite, ResourceTopic, "orders", false},     // another operation
		{alice, "1.2.3.4", OpDescribe, ResourceTopic, "orders", true},   // Read implies Describe
		{bob, "1.2.3.4", OpRead, ResourceTopic, "orders", false},        // another principal; the wildcard only gives Describe
		{bob, "1.2.3.4", OpDescribe, ResourceTopic, "anything", true},   // LITERAL "*"
		{alice, "1.2.3.4", OpWrite, ResourceTopic, "payments", true},    // PREFIXED
		{alice, "1.2.3.4", OpWrite, ResourceTopic, "payroll-eu", false}, // a longer PREFIXED DENY wins
		{alice, "1.2.3.4", OpWrite, ResourceTopic, "pa", false},         // shorter than the prefix
		{alice, "1.2.3.4", OpDescribeConfigs, ResourceTopic, "cfg", true},
		{alice, "1.2.3.4", OpDescribe, ResourceTopic, "cfg", false},   // AlterConfigs implies DescribeConfigs only
		{alice, "1.2.3.4", OpRead, ResourceTopic, "secret", false},    // DENY beats User:* ALL
		{alice, "1.2.3.4", OpDescribe, ResourceTopic, "secret", true}, // a DENY of Read does not deny Describe
		{bob, "1.2.3.4", OpRead, ResourceTopic, "secret", true},
		{alice, "10.0.0.1", OpRead, ResourceTopic, "local", true},
		{alice, "10.0.0.2", OpRead, ResourceTopic, "local", false},   // host
		{alice, "1.2.3.4", OpWrite, ResourceTopic, "nowrite", false}, // DENY ALL beats ALLOW Write
		{alice, "1.2.3.4", OpRead, ResourceGroup, "g1", true},
		{alice, "1.2.3.4", OpRead, ResourceGroup, "orders", false},  // resource types are apart
		{alice, "1.2.3.4", OpRead, ResourceTopic, "unnamed", false}, // no ACL at all, default deny
		{"User:admin", "1.2.3.4", OpAlter, ResourceCluster, ClusterName, true},
	} {
		if got := a.Authorize(tc.principal, tc.host, tc.op, tc.rt, tc.name); got != tc.want {
			t.Errorf("%s from %s %s %s %q = %v, want %v", tc.principal, tc.host, tc.op, tc.rt, tc.name, got, tc.want)
		}
	}
}

// Kafka: allow.everyone.if.no.acl.found applies only to resources that
// no ACL applies to, for anyone.
func TestAllowEveryoneIfNoACLFound(t *testing.T) {
	a := NewAuthorizer(Config{AllowEveryoneIfNoACL: true})
	a.Store(NewSnapshot([]Entry{allow(ResourceTopic, PatternPrefixed, "team-", "User:alice", OpRead)}))
	if !a.Authorize("User:bob", "h", OpWrite, ResourceTopic, "other") {
		t.Error("a topic no ACL names is denied with allow.everyone.if.no.acl.found=true")
	}
	if a.Authorize("User:bob", "h", OpRead, ResourceTopic, "team-x") {
		t.Error("a topic an ACL of another principal applies to is allowed")
	}
	off := NewAuthorizer(Config{})
	if off.Authorize("User:bob", "h", OpRead, ResourceTopic, "other") {
		t.Error("allow.everyone.if.no.acl.found defaults to false")
	}
}

// Kafka: AclControlManager.validateNewAcl and AclApis' cluster name check.
func TestValidate(t *testing.T) {
	ok := allow(ResourceTopic, PatternLiteral, "t", "User:a", OpRead).Binding
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*Binding){
		"any resource":   func(b *Binding) { b.ResourceType = ResourceAny },
		"match pattern":  func(b *Binding) { b.PatternType = PatternMatch },
		"any operation":  func(b *Binding) { b.Operation = OpAny },
		"any permission": func(b *Binding) { b.Permission = PermissionAny },
		"empty name":     func(b *Binding) { b.ResourceName = "" },
		"cluster name":   func(b *Binding) { b.ResourceType = ResourceCluster },
		"principal":      func(b *Binding) { b.Principal = "alice" },
		"out of range":   func(b *Binding) { b.Operation = 99 },
	} {
		b := ok
		mut(&b)
		if err := b.Validate(); err == nil {
			t.Errorf("%s: accepted %v", name, b)
		}
	}
}

// Kafka: ResourcePatternFilter.matches, AccessControlEntryFilter.matches.
func TestFilter(t *testing.T) {
	s := func(v string) *string { return &v }
	lit := allow(ResourceTopic, PatternLiteral, "foo", "User:a", OpRead).Binding
	star := allow(ResourceTopic, PatternLiteral, "*", "User:a", OpRead).Binding
	pre := allow(ResourceTopic, PatternPrefixed, "fo", "User:a", OpRead).Binding
	for _, tc := range []struct {
		f    Filter
		b    Binding
		want bool
	}{
		{Filter{ResourceAny, nil, PatternAny, nil, nil, OpAny, PermissionAny}, pre, true},
		{Filter{ResourceTopic, s("foo"), PatternAny, nil, nil, OpAny, PermissionAny}, pre, false},
		{Filter{ResourceTopic, s("foo"), PatternMatch, nil, nil, OpAny, PermissionAny}, pre, true},
		{Filter{ResourceTopic, s("foo"), PatternMatch, nil, nil, OpAny, PermissionAny}, star, true},
		{Filter{ResourceTopic, s("foo"), PatternMatch, nil, nil, OpAny, PermissionAny}, lit, true},
		{Filter{ResourceTopic, s("f"), PatternMatch, nil, nil, OpAny, PermissionAny}, pre, false},
		{Filter{ResourceTopic, s("foo"), PatternLiteral, nil, nil, OpAny, PermissionAny}, star, false},
		{Filter{ResourceGroup, nil, PatternAny, nil, nil, OpAny, PermissionAny}, lit, false},
		{Filter{ResourceAny, nil, PatternAny, s("User:b"), nil, OpAny, PermissionAny}, lit, false},
		{Filter{ResourceAny, nil, PatternAny, nil, s("*"), OpRead, PermissionAllow}, lit, true},
		{Filter{ResourceAny, nil, PatternAny, nil, nil, OpWrite, PermissionAny}, lit, false},
		{Filter{ResourceAny, nil, PatternAny, nil, nil, OpAny, PermissionDeny}, lit, false},
	} {
		if got := tc.f.Matches(tc.b); got != tc.want {
			t.Errorf("%+v matches %v = %v, want %v", tc.f, tc.b, got, tc.want)
		}
	}
	if (Filter{ResourceUnknown, nil, PatternAny, nil, nil, OpAny, PermissionAny}).Validate() == nil {
		t.Error("a filter with an UNKNOWN resource type is valid")
	}
}

// naive decides by looking at every ACL: the reference the index must
// agree with.
func naive(acls []Entry, principal, host string, op Operation, rt ResourceType, name string) verdict {
	d := decision{principal: principal, host: host, op: op}
	for i := range acls {
		b := &acls[i].Binding
		applies := b.ResourceType == rt && (b.PatternType == PatternLiteral && (b.ResourceName == name || b.ResourceName == "*") ||
			b.PatternType == PatternPrefixed && strings.HasPrefix(name, b.ResourceName))
		if applies {
			d.visit(&acls[i])
		}
	}
	switch {
	case d.deny:
		return denied
	case d.allow:
		return allowed
	case d.hasACLs:
		return denied
	}
	return noACLs
}

// The ordered index's prefix walk finds exactly the ACLs a scan of all
// of them finds. Kafka: StandardAuthorizerData.findAclRule's walk
// (KAFKA-14086 fixed a walk that stopped at the first non-prefix).
func TestIndexAgreesWithScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		b := make([]byte, rng.IntN(5))
		for i := range b {
			b[i] = "ab*"[rng.IntN(3)]
		}
		return string(b)
	}
	for round := range 300 {
		var acls []Entry
		for range rng.IntN(40) {
			e := allow(ResourceType(2+rng.IntN(2)), PatternType(3+rng.IntN(2)), word(), []string{"User:a", "User:b", "User:*"}[rng.IntN(3)], Operation(2+rng.IntN(10)))
			if rng.IntN(3) == 0 {
				e.Permission = PermissionDeny
			}
			if rng.IntN(4) == 0 {
				e.Host = "h1"
			}
			acls = append(acls, e)
		}
		s := NewSnapshot(acls)
		for range 50 {
			p, h, op, rt, name := []string{"User:a", "User:b"}[rng.IntN(2)], []string{"h1", "h2"}[rng.IntN(2)], Operation(2+rng.IntN(10)), ResourceType(2+rng.IntN(2)), word()
			if got, want := s.decide(p, h, op, rt, name), naive(acls, p, h, op, rt, name); got != want {
				t.Fatalf("round %d: %s %s %s %s %q: index %d, scan %d\nACLs: %v", round, p, h, op, rt, name, got, want, acls)
			}
		}
	}
}

func TestNames(t *testing.T) {
	for _, s := range []string{"TransactionalId", "TRANSACTIONAL_ID", "transactional_id"} {
		if rt, ok := ParseResourceType(s); !ok || rt != ResourceTransactionalID {
			t.Errorf("ParseResourceType(%q) = %v, %v", s, rt, ok)
		}
	}
	if op, ok := ParseOperation("ClusterAction"); !ok || op != OpClusterAction || op.String() != "CLUSTER_ACTION" {
		t.Errorf("ParseOperation(ClusterAction) = %v, %v", op, ok)
	}
	if got := ParseSuperUsers(" User:a ; User:b;;"); fmt.Sprint(got) != "[User:a User:b]" {
		t.Errorf("ParseSuperUsers = %v", got)
	}
}

// Kafka: Authorizer.authorizeByResourceType, which InitProducerId uses
// for idempotent producers without IdempotentWrite (KIP-679).
func TestAuthorizeAny(t *testing.T) {
	const alice = "User:alice"
	for _, tc := range []struct {
		name string
		acls []Entry
		want bool
	}{
		{"no ACL", nil, false},
		{"literal write", []Entry{allow(ResourceTopic, PatternLiteral, "t", alice, OpWrite)}, true},
		{"another principal", []Entry{allow(ResourceTopic, PatternLiteral, "t", "User:bob", OpWrite)}, false},
		{"read only", []Entry{allow(ResourceTopic, PatternLiteral, "t", alice, OpRead)}, false},
		{"group write", []Entry{allow(ResourceGroup, PatternLiteral, "t", alice, OpAll)}, false},
		{"denied by literal", []Entry{allow(ResourceTopic, PatternLiteral, "t", alice, OpWrite), deny(ResourceTopic, PatternLiteral, "t", alice, OpWrite)}, false},
		{"denied by prefix", []Entry{allow(ResourceTopic, PatternPrefixed, "team-a", alice, OpWrite), deny(ResourceTopic, PatternPrefixed, "team-", alice, OpAll)}, false},
		{"prefix deny elsewhere", []Entry{allow(ResourceTopic, PatternPrefixed, "team-a", alice, OpWrite), deny(ResourceTopic, PatternPrefixed, "team-b", alice, OpWrite)}, true},
		{"wildcard deny", []Entry{allow(ResourceTopic, PatternLiteral, "t", alice, OpWrite), deny(ResourceTopic, PatternLiteral, "*", WildcardPrincipal, OpWrite)}, false},
		{"wildcard principal", []Entry{allow(ResourceTopic, PatternPrefixed, "x", WildcardPrincipal, OpAll)}, true},
	} {
		a := NewAuthorizer(Config{})
		a.Store(NewSnapshot(tc.acls))
		if got := a.AuthorizeAny(alice, "h", OpWrite, ResourceTopic); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if !NewAuthorizer(Config{AllowEveryoneIfNoACL: true}).AuthorizeAny(alice, "h", OpWrite, ResourceTopic) {
		t.Error("allow.everyone.if.no.acl.found with no topic ACL")
	}
	if !NewAuthorizer(Config{SuperUsers: []string{alice}}).AuthorizeAny(alice, "h", OpWrite, ResourceTopic) {
		t.Error("a super user")
	}
}

// Decisions read one snapshot whole while Store swaps them: run with
// -race. Every snapshot stored allows the request, so a torn read shows
// as a denial.
func TestStoreWhileAuthorizing(t *testing.T) {
	a := NewAuthorizer(Config{})
	a.Store(NewSnapshot([]Entry{allow(ResourceTopic, PatternLiteral, "t", "User:a", OpRead)}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			acls := []Entry{allow(ResourceTopic, PatternPrefixed, "t", "User:a", OpRead)}
			for j := range i {
				acls = append(acls, allow(ResourceTopic, PatternLiteral, fmt.Sprint(j), "User:b", OpWrite))
			}
			a.Store(NewSnapshot(acls))
		}
	}()
	for {
		select {
		case <-done:
			return
		default:
		}
		if !a.Authorize("User:a", "h", OpRead, ResourceTopic, "t") {
			t.Fatal("a decision during a swap denied what every snapshot allows")
		}
	}
}
