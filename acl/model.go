package acl

import (
	"errors"
	"fmt"
	"strings"
)

// The codes below are Kafka's, as its protocol and its metadata records
// carry them (org.apache.kafka.common.resource.ResourceType,
// PatternType, org.apache.kafka.common.acl.AclOperation and
// AclPermissionType). They are part of the wire format and never change.

// ResourceType is what an ACL protects.
type ResourceType int8

// Kafka's resource types.
const (
	ResourceUnknown         ResourceType = 0
	ResourceAny             ResourceType = 1 // filters only
	ResourceTopic           ResourceType = 2
	ResourceGroup           ResourceType = 3
	ResourceCluster         ResourceType = 4
	ResourceTransactionalID ResourceType = 5
	ResourceDelegationToken ResourceType = 6
	ResourceUser            ResourceType = 7
)

// PatternType says how an ACL's resource name matches resources.
type PatternType int8

// Kafka's pattern types. ANY and MATCH are for filters only.
const (
	PatternUnknown  PatternType = 0
	PatternAny      PatternType = 1 // a filter: every pattern type, names compared exactly
	PatternMatch    PatternType = 2 // a filter: the patterns that would match the filter's name
	PatternLiteral  PatternType = 3
	PatternPrefixed PatternType = 4
)

// Operation is what a principal does to a resource.
type Operation int8

// Kafka's operations.
const (
	OpUnknown         Operation = 0
	OpAny             Operation = 1 // filters only
	OpAll             Operation = 2
	OpRead            Operation = 3
	OpWrite           Operation = 4
	OpCreate          Operation = 5
	OpDelete          Operation = 6
	OpAlter           Operation = 7
	OpDescribe        Operation = 8
	OpClusterAction   Operation = 9
	OpDescribeConfigs Operation = 10
	OpAlterConfigs    Operation = 11
	OpIdempotentWrite Operation = 12
	OpCreateTokens    Operation = 13
	OpDescribeTokens  Operation = 14
)

// Permission is an ACL's verdict.
type Permission int8

// Kafka's permission types.
const (
	PermissionUnknown Permission = 0
	PermissionAny     Permission = 1 // filters only
	PermissionDeny    Permission = 2
	PermissionAllow   Permission = 3
)

// Wildcards, as Kafka spells them: a LITERAL resource named "*" matches
// every resource of its type, the principal "User:*" every user, the
// host "*" every host.
const (
	WildcardResource  = "*"
	WildcardPrincipal = "User:*"
	WildcardHost      = "*"
)

// ClusterName is the one name of the Cluster resource (Kafka's
// Resource.CLUSTER_NAME).
const ClusterName = "kafka-cluster"

// Binding is one ACL: a resource pattern and an access control entry.
// Kafka: AclBinding (ResourcePattern + AccessControlEntry).
type Binding struct {
	ResourceType ResourceType
	ResourceName string
	PatternType  PatternType
	Principal    string // Type:name, e.g. User:alice
	Host         string
	Operation    Operation
	Permission   Permission
}

// ErrInvalid is a binding or filter that Kafka refuses with
// INVALID_REQUEST.
var ErrInvalid = errors.New("invalid ACL")

// Validate applies Kafka's checks on a new ACL (AclControlManager.
// validateNewAcl and the broker's AclApis): a concrete resource type,
// pattern type, operation and permission; a non-empty resource name,
// kafka-cluster for the Cluster resource; a principal of the form
// Type:name.
func (b Binding) Validate() error {
	switch {
	case b.ResourceType <= ResourceAny || b.ResourceType > ResourceUser:
		return fmt.Errorf("%w: resource type %d", ErrInvalid, b.ResourceType)
	case b.PatternType != PatternLiteral && b.PatternType != PatternPrefixed:
		return fmt.Errorf("%w: pattern type %d", ErrInvalid, b.PatternType)
	case b.Operation <= OpAny || b.Operation > OpDescribeTokens:
		return fmt.Errorf("%w: operation %d", ErrInvalid, b.Operation)
	case b.Permission != PermissionAllow && b.Permission != PermissionDeny:
		return fmt.Errorf("%w: permission type %d", ErrInvalid, b.Permission)
	case b.ResourceName == "":
		return fmt.Errorf("%w: resource name should not be empty", ErrInvalid)
	case b.ResourceType == ResourceCluster && b.ResourceName != ClusterName:
		return fmt.Errorf("%w: the only valid name for the CLUSTER resource is %s", ErrInvalid, ClusterName)
	case !strings.Contains(b.Principal, ":"):
		return fmt.Errorf("%w: could not parse principal %q", ErrInvalid, b.Principal)
	}
	return nil
}

// String renders the binding as Kafka's kafka-acls lists one.
func (b Binding) String() string {
	return fmt.Sprintf("(resource=%s:%s:%s, principal=%s, host=%s, operation=%s, permission=%s)",
		b.ResourceType, b.PatternType, b.ResourceName, b.Principal, b.Host, b.Operation, b.Permission)
}

var resourceNames = [...]string{"UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"}
var patternNames = [...]string{"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"}
var operationNames = [...]string{"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
	"CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS"}
var permissionNames = [...]string{"UNKNOWN", "ANY", "DENY", "ALLOW"}

func name[T ~int8](names []string, v T) string {
	if v >= 0 && int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%d", v)
}

func parse[T ~int8](names []string, s string) (T, bool) {
	for i, n := range names {
		if strings.EqualFold(strings.ReplaceAll(n, "_", ""), strings.ReplaceAll(s, "_", "")) {
			return T(i), true
		}
	}
	return 0, false
}

func (t ResourceType) String() string { return name(resourceNames[:], t) }
func (p PatternType) String() string  { return name(patternNames[:], p) }
func (o Operation) String() string    { return name(operationNames[:], o) }
func (p Permission) String() string   { return name(permissionNames[:], p) }

// ParseResourceType reads a resource type by Kafka's name, in any case,
// with or without underscores (Topic, TRANSACTIONAL_ID, TransactionalId).
func ParseResourceType(s string) (ResourceType, bool) {
	return parse[ResourceType](resourceNames[:], s)
}

// ParsePatternType reads a pattern type by Kafka's name.
func ParsePatternType(s string) (PatternType, bool) { return parse[PatternType](patternNames[:], s) }

// ParseOperation reads an operation by Kafka's name (Read, ClusterAction).
func ParseOperation(s string) (Operation, bool) { return parse[Operation](operationNames[:], s) }

// ParsePermission reads a permission type by Kafka's name.
func ParsePermission(s string) (Permission, bool) { return parse[Permission](permissionNames[:], s) }
