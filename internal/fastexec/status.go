package fastexec

import (
	"context"
	"io"

	"github.com/99designs/gqlgen/graphql"
)

// Status is what a value written for a position means to its parent, as
// the identity of the graphql.Marshaler gqlgen's generated code would
// have returned for it: the parent object counts Null from a non-null
// field, and RequiredNull from a nullable one, as invalid.
type Status uint8

const (
	// Value is any value, null included when it is not one of the two below.
	Value Status = iota
	// Null is graphql.Null: no value (a nil, an error, a null from a marshaler).
	Null
	// RequiredNull is graphql.RequiredNull: a nullable field marked non-null
	// at run time (graphql.MarkNonNull) that resolved to nothing.
	RequiredNull
)

// StatusOf is the Status of a marshaler gqlgen's code returned.
func StatusOf(m graphql.Marshaler) Status {
	switch m {
	case graphql.Null:
		return Null
	case graphql.RequiredNull:
		return RequiredNull
	}
	return Value
}

// Marshaler turns a value written into w with status st back into the
// graphql.Marshaler gqlgen's code would have returned: graphql.Null and
// graphql.RequiredNull themselves, so that root field interceptors and
// the root object compare them as they do gqlgen's, or the bytes. It
// takes w's bytes; w goes back to the pool.
func Marshaler(st Status, w *Writer) graphql.Marshaler {
	defer PutWriter(w)
	switch st {
	case Null:
		return graphql.Null
	case RequiredNull:
		return graphql.RequiredNull
	}
	return raw(append([]byte(nil), w.B...))
}

// raw is JSON already written.
type raw []byte

func (r raw) MarshalGQL(w io.Writer) { w.Write(r) }

// Marshal writes m and returns its Status.
func (w *Writer) Marshal(m graphql.Marshaler) Status {
	m.MarshalGQL(w)
	return StatusOf(m)
}

// Duplicate says whether an earlier field of fields has the alias of
// fields[i]: gqlgen resolves both, and writes the first.
func Duplicate(fields []graphql.CollectedField, i int) bool {
	alias := fields[i].Alias
	for j := range i {
		if fields[j].Alias == alias {
			return true
		}
	}
	return false
}

// RecoverToNull runs resolve; when recoverPanics is set, a panic is
// reported through oc and resolves to graphql.Null (gqlgen's
// recoverToNull, which guards each root field it resolves concurrently).
func RecoverToNull(ctx context.Context, oc *graphql.OperationContext, recoverPanics bool, resolve func(context.Context) graphql.Marshaler) graphql.Marshaler {
	if recoverPanics {
		return recoverToNull(ctx, oc, resolve)
	}
	return resolve(ctx)
}

func recoverToNull(ctx context.Context, oc *graphql.OperationContext, resolve func(context.Context) graphql.Marshaler) (res graphql.Marshaler) {
	defer func() {
		if r := recover(); r != nil {
			oc.Error(ctx, oc.Recover(ctx, r))
			res = graphql.Null
		}
	}()
	return resolve(ctx)
}

// Observe runs a field's resolver under the field interceptors, as
// graphql.ResolveField does: it returns what they return, and the context
// they handed the resolver (ctx itself if they did not call it). A panic
// is reported through oc, with that context, when recoverPanics is set.
func Observe(ctx context.Context, oc *graphql.OperationContext, recoverPanics bool, call func(context.Context) (any, error)) (res any, rctx context.Context, err error, panicked bool) {
	rctx = ctx
	if recoverPanics {
		defer func() {
			if r := recover(); r != nil {
				oc.Error(rctx, oc.Recover(rctx, r))
				panicked = true
			}
		}()
	}
	res, err = oc.ResolverMiddleware(ctx, func(c context.Context) (any, error) {
		rctx = c // the context from the interceptors is the children's
		return call(c)
	})
	return res, rctx, err, false
}
