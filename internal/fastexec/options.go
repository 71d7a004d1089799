package fastexec

// Options configure a fast executable schema.
type Options struct {
	// ObservedFields says which fields the server's field interceptors
	// (handler extensions implementing graphql.FieldInterceptor) act on.
	// The fast path runs the interceptors, with a FieldContext as gqlgen
	// builds it, for those fields only; for every other field it reads the
	// value straight from its parent. Nil observes every field: what gqlgen
	// does, and the only safe choice when an interceptor does not say.
	ObservedFields func(FieldInfo) bool
}

// FieldInfo describes a field of the schema as its FieldContext will.
type FieldInfo struct {
	Object, Field string
	// IsMethod and IsResolver are the FieldContext's.
	IsMethod, IsResolver bool
}
