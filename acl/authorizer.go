package acl

import (
	"strings"
	"sync/atomic"
)

// Config is the authorizer's part of the broker configuration.
type Config struct {
	// SuperUsers are principals allowed everything (super.users).
	SuperUsers []string
	// AllowEveryoneIfNoACL allows an operation on a resource that no
	// ACL names at all (allow.everyone.if.no.acl.found, default false).
	AllowEveryoneIfNoACL bool
}

// ParseSuperUsers reads super.users: principals separated by
// semicolons (User:alice;User:bob), blanks around them ignored.
func ParseSuperUsers(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ";") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Authorizer decides requests with Kafka's StandardAuthorizer rules
// against the current Snapshot, which Store replaces atomically:
// Authorize takes no lock.
type Authorizer struct {
	superUsers map[string]bool
	allowIfNo  bool
	snap       atomic.Pointer[Snapshot]
}

// NewAuthorizer returns an authorizer with no ACLs.
func NewAuthorizer(cfg Config) *Authorizer {
	a := &Authorizer{superUsers: map[string]bool{}, allowIfNo: cfg.AllowEveryoneIfNoACL}
	for _, p := range cfg.SuperUsers {
		a.superUsers[p] = true
	}
	a.snap.Store(NewSnapshot(nil))
	return a
}

// Store makes s the ACLs later decisions read.
func (a *Authorizer) Store(s *Snapshot) { a.snap.Store(s) }

// Snapshot is the current ACLs.
func (a *Authorizer) Snapshot() *Snapshot { return a.snap.Load() }

// SuperUser reports whether principal is in super.users.
func (a *Authorizer) SuperUser(principal string) bool { return a.superUsers[principal] }

// Authorize decides whether principal, connected from host (an IP
// address), may perform op on the resource of type rt named name:
//
//  1. a super user may do anything;
//  2. the ACLs that apply are the LITERAL ones named name or "*" and
//     the PREFIXED ones whose name begins name; of those, an ACL
//     matches if its principal is principal or User:*, its host is
//     host or "*", and its operation is op or All, or (ALLOW only)
//     implies op: Read, Write, Delete and Alter imply Describe,
//     AlterConfigs implies DescribeConfigs;
//  3. a matching DENY denies, whatever else matches; else a matching
//     ALLOW allows;
//  4. with no match: denied if any ACL applies to the resource (for
//     anyone), else allow.everyone.if.no.acl.found decides.
func (a *Authorizer) Authorize(principal, host string, op Operation, rt ResourceType, name string) bool {
	if a.superUsers[principal] {
		return true
	}
	switch a.snap.Load().decide(principal, host, op, rt, name) {
	case allowed:
		return true
	case noACLs:
		return a.allowIfNo
	}
	return false
}

type verdict int

const (
	noACLs verdict = iota // no ACL names the resource
	denied                // a DENY matched, or ACLs exist and no ALLOW matched
	allowed
)

// decision gathers the ACLs of one request as they are visited.
type decision struct {
	principal, host string
	op              Operation
	hasACLs, allow  bool
	deny            bool
}

// visit folds one applicable ACL in; false stops at a DENY.
func (d *decision) visit(e *Entry) bool {
	d.hasACLs = true
	switch d.result(&e.Binding) {
	case PermissionDeny:
		d.deny = true
		return false
	case PermissionAllow:
		d.allow = true
	}
	return true
}

// result is Kafka's StandardAuthorizerData.findResult: the ACL's
// permission when it matches the request, PermissionUnknown when not.
func (d *decision) result(b *Binding) Permission {
	if b.Principal != d.principal && b.Principal != WildcardPrincipal {
		return PermissionUnknown
	}
	if b.Host != WildcardHost && b.Host != d.host {
		return PermissionUnknown
	}
	if b.Operation != OpAll && b.Operation != d.op && !(b.Permission == PermissionAllow && implies(b.Operation, d.op)) {
		return PermissionUnknown
	}
	return b.Permission
}

// implies reports whether an ALLOW of have also allows want.
func implies(have, want Operation) bool {
	switch want {
	case OpDescribe:
		return have == OpRead || have == OpWrite || have == OpDelete || have == OpAlter
	case OpDescribeConfigs:
		return have == OpAlterConfigs
	}
	return false
}

func (s *Snapshot) decide(principal, host string, op Operation, rt ResourceType, name string) verdict {
	d := decision{principal: principal, host: host, op: op}
	lit := s.sections[section{rt, PatternLiteral}]
	for _, lits := range [2][]Entry{s.literal(lit, name), s.wildcard(lit, name)} {
		for j := range lits {
			if !d.visit(&lits[j]) {
				return denied
			}
		}
	}
	s.prefixed(s.sections[section{rt, PatternPrefixed}], name, d.visit)
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

// wildcard returns the LITERAL "*" entries of sec, unless name is "*"
// itself (whose entries literal already returned).
func (s *Snapshot) wildcard(sec []Entry, name string) []Entry {
	if name == WildcardResource {
		return nil
	}
	return s.literal(sec, WildcardResource)
}

// AuthorizeAny decides whether principal may perform op on some
// resource of type rt, as Kafka's Authorizer.authorizeByResourceType
// does (KIP-679: an idempotent producer needs Write on any topic): a
// super user may; a LITERAL "*" DENY forbids; otherwise an ALLOW that
// matches the principal, host and operation allows unless a DENY of the
// same operation covers its whole pattern (a LITERAL DENY of its name, a
// PREFIXED DENY of a prefix of it). With no ACL of the type at all,
// allow.everyone.if.no.acl.found decides.
func (a *Authorizer) AuthorizeAny(principal, host string, op Operation, rt ResourceType) bool {
	if a.superUsers[principal] {
		return true
	}
	s := a.snap.Load()
	lit, pre := s.sections[section{rt, PatternLiteral}], s.sections[section{rt, PatternPrefixed}]
	if len(lit) == 0 && len(pre) == 0 {
		return a.allowIfNo
	}
	d := decision{principal: principal, host: host, op: op}
	denied := func(e *Entry) bool { return e.Permission == PermissionDeny && d.result(&e.Binding) == PermissionDeny }
	for i := range lit {
		if lit[i].ResourceName == WildcardResource && denied(&lit[i]) {
			return false
		}
	}
	covered := func(e *Entry) bool {
		if e.PatternType == PatternLiteral {
			for _, x := range s.literal(lit, e.ResourceName) {
				if denied(&x) {
					return true
				}
			}
		}
		found := false
		s.prefixed(pre, e.ResourceName, func(x *Entry) bool { found = denied(x); return !found })
		return found
	}
	for _, sec := range [2][]Entry{lit, pre} {
		for i := range sec {
			if sec[i].Permission == PermissionAllow && d.result(&sec[i].Binding) == PermissionAllow && !covered(&sec[i]) {
				return true
			}
		}
	}
	return false
}
