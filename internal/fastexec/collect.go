package fastexec

import (
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// FieldCache holds the fields graphql.CollectFields collected last for
// one object type in one operation, for a few selection sets. The objects
// of a list share their selection set, so all but the first find their
// fields here, without CollectFields' hashing of the type's names and its
// lock.
type FieldCache struct {
	entries [fieldCacheEntries]atomic.Pointer[collected]
	next    atomic.Uint32
}

// fieldCacheEntries is how many selection sets of one type a FieldCache
// keeps: a page selects a user in a few places (an author, reposters).
const fieldCacheEntries = 4

type collected struct {
	sel    ast.SelectionSet
	fields []graphql.CollectedField
	dups   []bool // by field: an earlier one has its alias (nil: none has)
}

// Collect is graphql.CollectFields(oc, sel, satisfies) for the cache's
// object type (satisfies is always that type's), and which of the fields
// have the alias of an earlier one: gqlgen resolves those too, but writes
// the first only.
func (c *FieldCache) Collect(oc *graphql.OperationContext, sel ast.SelectionSet, satisfies []string) (fields []graphql.CollectedField, dups []bool) {
	for i := range c.entries {
		if e := c.entries[i].Load(); e != nil && sameSelection(e.sel, sel) {
			return e.fields, e.dups
		}
	}
	e := &collected{sel: sel, fields: graphql.CollectFields(oc, sel, satisfies)}
	for i := range e.fields {
		if Duplicate(e.fields, i) {
			if e.dups == nil {
				e.dups = make([]bool, len(e.fields))
			}
			e.dups[i] = true
		}
	}
	c.entries[c.next.Add(1)%fieldCacheEntries].Store(e)
	return e.fields, e.dups
}

// sameSelection says whether a and b are the same selection set (the
// same elements of the same array), as CollectFields' own cache does.
func sameSelection(a, b ast.SelectionSet) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
