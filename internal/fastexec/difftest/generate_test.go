package difftest

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"

	"feedservice/models"
)

// generator writes random documents from the schema alone: any field of
// any type, with aliases (some of them clashing), arguments as literals or
// variables, inline fragments on the members of unions and interfaces,
// named fragments, __typename, and @skip and @include with literal and
// variable conditions. Some of what it writes is invalid (clashing aliases,
// a variable used where its type does not fit); randomDocuments keeps the
// valid ones.
type generator struct {
	schema    *ast.Schema
	rnd       *rand.Rand
	vars      []string       // the operation's variable definitions
	values    map[string]any // and their values
	fragments []string       // the named fragments' definitions
}

// randomDocuments are n valid random documents (with their variables),
// and how many it wrote that were invalid.
func randomDocuments(schema *ast.Schema, seed uint64, n int) (docs []document, invalid int) {
	rnd := newRand(seed)
	for len(docs) < n {
		g := &generator{schema: schema, rnd: rnd, values: map[string]any{}}
		query := g.document()
		if validDocument(schema, query) == nil {
			invalid++
			continue
		}
		docs = append(docs, document{source: "random " + strconv.Itoa(len(docs)), query: query, variables: g.values})
	}
	return docs, invalid
}

func (g *generator) chance(percent int) bool { return g.rnd.IntN(100) < percent }

func (g *generator) pick(n int) int { return g.rnd.IntN(n) }

func (g *generator) document() string {
	op, root := "query", g.schema.Query
	if g.schema.Mutation != nil && g.chance(15) {
		op, root = "mutation", g.schema.Mutation
	}
	body := g.selection(root, 2+g.pick(4))
	var b strings.Builder
	b.WriteString(op)
	if g.chance(50) {
		b.WriteString(" Op" + strconv.Itoa(g.pick(100)))
	}
	if len(g.vars) > 0 {
		b.WriteString("(" + strings.Join(g.vars, ", ") + ")")
	}
	b.WriteString(" " + body)
	for _, f := range g.fragments {
		b.WriteString("\n" + f)
	}
	return b.String()
}

// selection is a selection set on def, depth levels deep at most.
func (g *generator) selection(def *ast.Definition, depth int) string {
	var parts []string
	n := 1 + g.pick(4)
	for range n {
		switch {
		case def.Kind == ast.Union || (def.Kind == ast.Interface && g.chance(60)):
			parts = append(parts, g.fragmentOn(def, depth))
		case g.chance(8):
			parts = append(parts, g.alias("__typename")+"__typename"+g.directives())
		case g.chance(10) && depth > 0:
			parts = append(parts, g.fragmentOn(def, depth))
		default:
			if f := g.field(def, depth); f != "" {
				parts = append(parts, f)
			}
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "__typename")
	}
	return "{ " + strings.Join(parts, " ") + " }"
}

// fragmentOn is an inline fragment or a named fragment's spread, on def
// or on a type of its possible types (or on an interface of one).
func (g *generator) fragmentOn(def *ast.Definition, depth int) string {
	on := def
	if possible := g.schema.GetPossibleTypes(def); len(possible) > 0 && (def.Kind == ast.Union || g.chance(70)) {
		on = possible[g.pick(len(possible))]
	} else if len(def.Interfaces) > 0 && g.chance(30) {
		on = g.schema.Types[def.Interfaces[g.pick(len(def.Interfaces))]]
	}
	body := g.selection(on, depth-1)
	if g.chance(40) {
		name := "F" + strconv.Itoa(len(g.fragments))
		g.fragments = append(g.fragments, "fragment "+name+" on "+on.Name+" "+body)
		return "..." + name + g.directives()
	}
	if on == def && g.chance(30) {
		return "..." + g.directives() + " " + body
	}
	return "... on " + on.Name + g.directives() + " " + body
}

// field is one field of def (not an introspection one), with its
// arguments, directives and, for a composite type, its selection.
func (g *generator) field(def *ast.Definition, depth int) string {
	var fields ast.FieldList
	for _, f := range def.Fields {
		if strings.HasPrefix(f.Name, "__") {
			continue
		}
		composite := g.schema.Types[f.Type.Name()].Kind != ast.Scalar && g.schema.Types[f.Type.Name()].Kind != ast.Enum
		if depth <= 0 && composite {
			continue
		}
		fields = append(fields, f)
	}
	if len(fields) == 0 {
		return ""
	}
	f := fields[g.pick(len(fields))]
	out := g.alias(f.Name) + f.Name + g.arguments(f.Arguments) + g.directives()
	if t := g.schema.Types[f.Type.Name()]; t.Kind != ast.Scalar && t.Kind != ast.Enum {
		out += " " + g.selection(t, depth-1)
	}
	return out
}

var aliases = []string{"a", "b", "id", "node", "x", "username"}

func (g *generator) alias(field string) string {
	if !g.chance(25) {
		return ""
	}
	if g.chance(50) {
		return field + "2: "
	}
	return aliases[g.pick(len(aliases))] + ": "
}

func (g *generator) arguments(args ast.ArgumentDefinitionList) string {
	var out []string
	for _, a := range args {
		if !a.Type.NonNull && !g.chance(40) {
			continue
		}
		out = append(out, a.Name+": "+g.value(a.Type))
	}
	if len(out) == 0 {
		return ""
	}
	return "(" + strings.Join(out, ", ") + ")"
}

func (g *generator) directives() string {
	if !g.chance(15) {
		return ""
	}
	name := "include"
	if g.chance(50) {
		name = "skip"
	}
	cond := strconv.FormatBool(g.chance(50))
	if g.chance(50) {
		cond = g.variable(&ast.Type{NamedType: "Boolean", NonNull: true}, g.chance(50))
	}
	return " @" + name + "(if: " + cond + ")"
}

// value is a literal of type t, or a variable holding one.
func (g *generator) value(t *ast.Type) string {
	v := g.make(t)
	if g.chance(50) {
		return g.variable(t, v)
	}
	return literal(v)
}

// variable defines a variable of type t holding v, and names it.
func (g *generator) variable(t *ast.Type, v any) string {
	name := "v" + strconv.Itoa(len(g.vars))
	g.vars = append(g.vars, "$"+name+": "+t.String())
	g.values[name] = v
	return "$" + name
}

// make is a value of type t: numbers at and past the edges the resolvers
// check, strings that need escapes, ids that name users and posts, that
// name nothing, and that are no ids.
func (g *generator) make(t *ast.Type) any {
	if !t.NonNull && g.chance(10) {
		return nil
	}
	if t.Elem != nil {
		var list []any
		for range g.pick(4) {
			list = append(list, g.make(t.Elem))
		}
		if list == nil {
			list = []any{}
		}
		return list
	}
	switch def := g.schema.Types[t.NamedType]; {
	case def.Kind == ast.InputObject:
		obj := map[string]any{}
		for _, f := range def.Fields {
			if f.Type.NonNull || g.chance(50) {
				obj[f.Name] = g.make(f.Type)
			}
		}
		return obj
	case def.Kind == ast.Enum:
		return def.EnumValues[g.pick(len(def.EnumValues))].Name
	}
	switch t.NamedType {
	case "Int":
		return []int{0, 1, 2, 3, 5, 20, -1, 101}[g.pick(8)]
	case "Boolean":
		return g.chance(50)
	case "ID":
		switch g.pick(5) {
		case 0:
			return "not an id"
		case 1, 2:
			return models.NodeID(models.KindUser, int64(1+g.pick(worldUsers+2)))
		default:
			return models.NodeID(models.KindPost, int64(1+g.pick(worldPosts+2)))
		}
	}
	if g.chance(50) {
		return "user" + strconv.Itoa(1+g.pick(worldUsers+1))
	}
	return strangeStrings[g.pick(len(strangeStrings))]
}

// literal writes v as a GraphQL literal (a JSON string is a GraphQL
// string; enum values are written bare, but the schema has none).
func literal(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = literal(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			parts = append(parts, k+": "+literal(v[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprint(v, err))
	}
	return string(b)
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }
