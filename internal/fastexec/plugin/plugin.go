// Package plugin is the gqlgen plugin that generates the fast executor
// (graph/fastexec.go) beside gqlgen's generated.go: per object type of the
// schema, code that resolves its fields and writes their JSON straight
// into a buffer, calling into generated.go (field contexts, arguments,
// resolvers, enum maps, field functions) for everything it leaves to
// gqlgen. What the generated code must reproduce is gqlgen's own
// templates, codegen/object.gotpl, field.gotpl, type.gotpl and
// interface.gotpl of the gqlgen version in go.mod, and the runtime they
// call (graphql.ResolveField, MarshalSliceConcurrently, FieldSet.Dispatch):
// docs/performance.md says how to carry it to a new gqlgen version.
package plugin

import (
	_ "embed"
	"fmt"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"text/template"

	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
	"github.com/99designs/gqlgen/codegen/templates"
	"github.com/vektah/gqlparser/v2/ast"

	"feedservice/internal/fastexec"
)

//go:embed fastexec.gotpl
var fastexecTemplate string

// Filename is the generated file's name, in the directory of the exec
// package (gqlgen.yml's exec.filename).
const Filename = "fastexec.go"

// New returns the plugin.
func New() *Plugin { return &Plugin{} }

// Plugin generates graph/fastexec.go.
type Plugin struct{}

// Name is the plugin's name for gqlgen.
func (*Plugin) Name() string { return "fastexec" }

func (*Plugin) filename(cfg *config.Config) string {
	return filepath.Join(filepath.Dir(cfg.Exec.Filename), Filename)
}

// MutateConfig removes the fast executor of the previous generation
// before gqlgen builds anything: it calls generated.go's functions, and
// gqlgen is about to rewrite those.
func (p *Plugin) MutateConfig(cfg *config.Config) error {
	if err := os.Remove(p.filename(cfg)); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// GenerateCode writes the fast executor.
func (p *Plugin) GenerateCode(data *codegen.Data) error {
	m, err := buildModel(data)
	if err != nil {
		return err
	}
	if m.Unsupported != "" {
		fmt.Fprintf(os.Stderr, "fastexec: every operation runs on gqlgen's executor: %s\n", m.Unsupported)
	}
	return templates.Render(templates.Options{
		PackageName:     data.Config.Exec.Package,
		Filename:        p.filename(data.Config),
		Data:            m,
		Funcs:           template.FuncMap{"fast": fastName},
		GeneratedHeader: true,
		Packages:        data.Config.Packages,
		Template:        fastexecTemplate,
		PruneOptions:    data.Config.GetPruneOptions(),
	})
}

// model is what the template reads.
type model struct {
	Data *codegen.Data
	// Unsupported names what of the schema or configuration the fast
	// path does not do; when set, every operation goes to gqlgen.
	Unsupported string
	Recover     bool   // gqlgen recovers panics (omit_panic_handler is off)
	Runtime     string // the import path of package fastexec
	Objects     []*object
	Roots       []*object
	Interfaces  []*codegen.Interface
	Types       []*typeRef
	Fields      []*field
	// Concurrent lists, per type name, the fields gqlgen resolves
	// concurrently; for an interface or a union, those of any member.
	Concurrent []typeFields
}

type typeFields struct {
	Type   string
	Fields []string
}

type object struct {
	*codegen.Object
	// Op is the operation type of a root object ("Query", "Mutation").
	Op     string
	Fields []*field
	// ConcurrentNames are the names of the fields gqlgen resolves after the
	// others, concurrently (FieldSet.Dispatch).
	ConcurrentNames []string
}

type field struct {
	*codegen.Field
	ID int
	// Kind is how the fast path resolves the field: "direct" reads a
	// struct field or calls a method that takes no context, no arguments
	// and returns no error, with no FieldContext unless a field interceptor
	// observes it; "resolve" runs gqlgen's ResolveField steps itself
	// (resolvers, methods with a context or an error, arguments, observed
	// fields); "delegate" calls gqlgen's own field function.
	Kind string
	// Marshal is the fast marshal function of the field's type.
	Marshal string
	// NilInterface: the field's Go type is an interface, which gqlgen's
	// ResolveField sees as a nil result when nil.
	NilInterface bool
	// KeepsResult: the value is an object or list, so a FieldContext built
	// for a field below it needs it as Result.
	KeepsResult bool
	// Recover: gqlgen's ResolveField would recover a panic here.
	Recover bool
}

// typeRef is a type gqlgen generates a marshal function for; the fast
// path gets one of its own.
type typeRef struct {
	*config.TypeReference
	// Kind follows the branches of type.gotpl's marshal function.
	Kind string
	// Inline names how the fast path writes a scalar whose marshaler is
	// one of gqlgen's own, without a graphql.Marshaler: "string", "int",
	// "bool", "time"; empty calls the marshaler.
	Inline string
	// Elem is the element's (or pointee's) type, for lists and pointers.
	Elem *typeRef
	// Object and Interface name the fast function of a leaf object or
	// interface type.
	Object, Interface string
}

func fastName(marshalFunc string) string { return "fast_" + marshalFunc }

func buildModel(data *codegen.Data) (*model, error) {
	cfg := data.Config
	m := &model{Data: data, Recover: !cfg.OmitPanicHandler, Runtime: reflect.TypeFor[fastexec.Writer]().PkgPath()}
	switch {
	case cfg.UseFunctionSyntaxForExecutionContext:
		m.Unsupported = "use_function_syntax_for_execution_context is set"
	case cfg.Exec.WorkerLimit != 0:
		m.Unsupported = "exec.worker_limit is set"
	case cfg.Federation.IsDefined():
		m.Unsupported = "federation is on"
	case data.HasBatchResolverFields():
		m.Unsupported = "the schema has batch resolvers"
	case len(data.AllDirectives.LocationDirectives("FIELD")) > 0:
		m.Unsupported = "the schema has FIELD directives with an implementation"
	}

	for _, o := range data.Objects {
		if o.IsReserved() || o.Stream {
			continue
		}
		obj := &object{Object: o}
		for _, f := range o.Fields {
			fl := &field{Field: f, ID: len(m.Fields), Recover: m.Recover}
			fl.Kind = fieldKind(f)
			if o.Root && fl.Kind == "direct" {
				fl.Kind = "resolve" // no Go value to read a root field from
			}
			if fl.Kind != "delegate" && !f.TypeReference.IsRoot {
				fl.Marshal = fastName(f.TypeReference.MarshalFunc())
			} else {
				fl.Kind = "delegate"
			}
			fl.NilInterface = isInterface(f.TypeReference.GO)
			fl.KeepsResult = f.TypeReference.IsSlice() || (f.TypeReference.Definition.Kind != ast.Scalar && f.TypeReference.Definition.Kind != ast.Enum)
			if fl.Kind == "direct" && f.IsVariable() && inlineMarshaler(f.TypeReference) != "" {
				fl.Recover = false // a struct field read and an inline write cannot panic
			}
			obj.Fields = append(obj.Fields, fl)
			m.Fields = append(m.Fields, fl)
			if f.IsConcurrent() {
				obj.ConcurrentNames = append(obj.ConcurrentNames, f.Name)
			}
		}
		switch o {
		case data.QueryRoot:
			obj.Op = "Query"
			m.Roots = append(m.Roots, obj)
		case data.MutationRoot:
			obj.Op = "Mutation"
			m.Roots = append(m.Roots, obj)
		default:
			m.Objects = append(m.Objects, obj)
		}
		if len(obj.ConcurrentNames) > 0 {
			m.Concurrent = append(m.Concurrent, typeFields{o.Name, obj.ConcurrentNames})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(data.Interfaces)) {
		i := data.Interfaces[name]
		if strings.HasPrefix(i.Name, "__") {
			continue
		}
		m.Interfaces = append(m.Interfaces, i)
		var names []string
		for _, impl := range i.Implementors {
			for _, c := range m.Concurrent {
				if c.Type == impl.Name {
					names = append(names, c.Fields...)
				}
			}
		}
		if len(names) > 0 {
			sort.Strings(names)
			m.Concurrent = append(m.Concurrent, typeFields{i.Name, compact(names)})
		}
	}

	refs := map[string]*typeRef{}
	for _, key := range slices.Sorted(maps.Keys(data.ReferencedTypes)) {
		ref := data.ReferencedTypes[key]
		if ref.MarshalFunc() == "" || strings.HasPrefix(ref.Definition.Name, "__") {
			continue
		}
		if _, err := addType(refs, ref, m); err != nil {
			return nil, err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(refs)) {
		m.Types = append(m.Types, refs[name])
	}
	return m, nil
}

// fieldKind classifies a field for the fast path (see field.Kind).
func fieldKind(f *codegen.Field) string {
	switch {
	case strings.HasPrefix(f.Name, "__"), f.IsMap(), f.IsBatch(), f.HasDirectives(), f.Stream,
		f.VOkFunc, f.HasHaser, !(f.IsResolver || f.IsMethod() || f.IsVariable()):
		return "delegate"
	case !f.IsResolver && len(f.Args) == 0 && (f.IsVariable() || (!f.MethodHasContext && f.NoErr)):
		return "direct"
	}
	return "resolve"
}

// addType adds the fast marshal function of ref, and those it calls.
func addType(refs map[string]*typeRef, ref *config.TypeReference, m *model) (*typeRef, error) {
	name := ref.MarshalFunc()
	if t, ok := refs[name]; ok {
		return t, nil
	}
	t := &typeRef{TypeReference: ref}
	refs[name] = t
	var err error
	switch {
	case ref.IsPtrToSlice() || ref.IsPtrToIntf():
		t.Kind = "deref"
		t.Elem, err = addType(refs, ref.Elem(), m)
	case ref.IsSlice():
		t.Kind = "list"
		t.Elem, err = addType(refs, ref.Elem(), m)
	case ref.IsPtrToPtr() && ref.Unmarshaler == nil && !ref.IsMarshaler:
		t.Kind = "deref"
		t.Elem, err = addType(refs, ref.Elem(), m)
	case ref.IsMarshaler:
		t.Kind = "marshaler"
		if ref.IsContext {
			m.Unsupported = ref.Definition.Name + " has a context marshaler, which gqlgen runs as it writes the response"
		}
	case ref.Marshaler != nil:
		t.Kind = "scalar"
		t.Inline = inlineMarshaler(ref)
		if ref.IsContext {
			m.Unsupported = ref.Definition.Name + " has a context marshaler, which gqlgen runs as it writes the response"
		}
	case ref.IsRoot:
		t.Kind = "root"
	case ref.Definition.Kind == ast.Object:
		t.Kind = "object"
		t.Object = ref.Definition.Name
	case ref.Definition.Kind == ast.Interface || ref.Definition.Kind == ast.Union:
		t.Kind = "interface"
		t.Interface = ref.Definition.Name
	default:
		return nil, fmt.Errorf("fastexec: no marshaler for %s (%s)", ref.GQL.String(), ref.GO)
	}
	return t, err
}

// Value is the expression type.gotpl hands the scalar marshaler (called
// while the template runs: it names imported types).
func (t *typeRef) Value() string {
	ref := t.TypeReference
	v := "v"
	if ref.IsTargetNilable() && !ref.IsNilable() {
		v = "&v"
	} else if !ref.IsTargetNilable() && ref.IsNilable() {
		v = "*v"
	}
	if ref.HasEnumValues() {
		return fmt.Sprintf("%s[%s]", ref.EnumMarshalVar(false), v)
	}
	if ref.CastType != nil {
		return fmt.Sprintf("%s(%s)", templates.CurrentImports.LookupType(ref.CastType), v)
	}
	return v
}

// inlineMarshaler is how the fast path writes the scalar itself, when its
// marshaler is one of gqlgen's whose output Writer reproduces (the
// fastexec tests compare them).
func inlineMarshaler(ref *config.TypeReference) string {
	if ref.Marshaler == nil || ref.HasEnumValues() || ref.CastType != nil || ref.IsContext ||
		(ref.IsTargetNilable() && !ref.IsNilable()) {
		return ""
	}
	switch ref.Marshaler.FullName() {
	case "github.com/99designs/gqlgen/graphql.MarshalString", "github.com/99designs/gqlgen/graphql.MarshalID":
		return "string"
	case "github.com/99designs/gqlgen/graphql.MarshalInt", "github.com/99designs/gqlgen/graphql.MarshalInt32",
		"github.com/99designs/gqlgen/graphql.MarshalInt64":
		return "int"
	case "github.com/99designs/gqlgen/graphql.MarshalBoolean":
		return "bool"
	case "github.com/99designs/gqlgen/graphql.MarshalTime":
		return "time"
	}
	return ""
}

func isInterface(t types.Type) bool {
	_, ok := types.Unalias(t).Underlying().(*types.Interface)
	return ok
}

func compact(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}
