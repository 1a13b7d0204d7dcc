package acl

import (
	"fmt"
	"strings"
)

// Filter selects ACLs, for DescribeAcls and DeleteAcls. Kafka:
// AclBindingFilter (ResourcePatternFilter + AccessControlEntryFilter).
// A nil name, principal or host matches any; ResourceAny, PatternAny,
// OpAny and PermissionAny match any value of their field.
type Filter struct {
	ResourceType ResourceType
	ResourceName *string
	PatternType  PatternType
	Principal    *string
	Host         *string
	Operation    Operation
	Permission   Permission
}

// Validate refuses a filter with an UNKNOWN element, as Kafka does
// (AclBindingFilter.findIndefiniteField).
func (f Filter) Validate() error {
	switch {
	case f.ResourceType == ResourceUnknown || f.ResourceType > ResourceUser || f.ResourceType < 0:
		return fmt.Errorf("%w: filter resource type %d", ErrInvalid, f.ResourceType)
	case f.PatternType == PatternUnknown || f.PatternType > PatternPrefixed || f.PatternType < 0:
		return fmt.Errorf("%w: filter pattern type %d", ErrInvalid, f.PatternType)
	case f.Operation == OpUnknown || f.Operation > OpDescribeTokens || f.Operation < 0:
		return fmt.Errorf("%w: filter operation %d", ErrInvalid, f.Operation)
	case f.Permission == PermissionUnknown || f.Permission > PermissionAllow || f.Permission < 0:
		return fmt.Errorf("%w: filter permission type %d", ErrInvalid, f.Permission)
	}
	return nil
}

// Matches reports whether the filter selects b, with Kafka's rules
// (ResourcePatternFilter.matches, AccessControlEntryFilter.matches): a
// MATCH filter with a name selects the LITERAL ACLs of that name or of
// "*" and the PREFIXED ACLs whose name begins the filter's.
func (f Filter) Matches(b Binding) bool {
	return f.matchesPattern(b) && f.matchesEntry(b)
}

func (f Filter) matchesPattern(b Binding) bool {
	if f.ResourceType != ResourceAny && f.ResourceType != b.ResourceType {
		return false
	}
	if f.PatternType != PatternAny && f.PatternType != PatternMatch && f.PatternType != b.PatternType {
		return false
	}
	if f.ResourceName == nil {
		return true
	}
	name := *f.ResourceName
	if f.PatternType != PatternMatch {
		return name == b.ResourceName
	}
	switch b.PatternType {
	case PatternLiteral:
		return name == b.ResourceName || b.ResourceName == WildcardResource
	case PatternPrefixed:
		return strings.HasPrefix(name, b.ResourceName)
	}
	return false
}

func (f Filter) matchesEntry(b Binding) bool {
	switch {
	case f.Principal != nil && *f.Principal != b.Principal,
		f.Host != nil && *f.Host != b.Host,
		f.Operation != OpAny && f.Operation != b.Operation,
		f.Permission != PermissionAny && f.Permission != b.Permission:
		return false
	}
	return true
}
