package api

import (
	"context"
	"math"
	"strconv"

	"feedservice/internal/apperr"

	"github.com/vektah/gqlparser/v2/ast"
)

// operationMeasure is what the document limits check of an operation.
type operationMeasure struct {
	// depth is how deep its fields nest, through fragments.
	depth int
	// fields counts its fields with every fragment spread expanded: the
	// fields gqlgen's complexity walker and its executor would visit. It
	// saturates at math.MaxInt.
	fields int
	// introspects is true when it selects __schema or __type anywhere.
	introspects bool
	// visits counts the selections the walk looked at: at most the
	// selections written in the document, whatever fields says.
	visits int
}

// measureOperation measures op in one walk over its document. A named
// fragment is measured once, at its first spread, and every later spread
// adds its cached measure. So the walk visits each selection of the document
// at most once: a fragment spread twice by the one before it, sixty deep, is
// 2^60 fields expanded but only its written selections to measure. (gqlgen's
// complexity walker walks a fragment again at every spread; the limits refuse
// such an operation before that walker runs.)
//
// The walk stops with ctx's error when ctx ends. A fragment that spreads
// itself, which validation refuses before this runs, is a BAD_USER_INPUT
// error.
func measureOperation(ctx context.Context, fragments ast.FragmentDefinitionList, op *ast.OperationDefinition) (operationMeasure, error) {
	w := documentWalk{ctx: ctx, fragments: fragments, measured: map[string]selectionMeasure{}, walking: map[string]bool{}}
	m := w.selectionSet(op.SelectionSet)
	return operationMeasure{depth: m.depth, fields: m.fields, introspects: w.introspects, visits: w.visits}, w.err
}

// ctxCheckEvery is how many selections the walk visits between looks at
// its context: often enough to stop within microseconds, rarely enough to
// cost nothing.
const ctxCheckEvery = 64

// documentWalk is the state of one measureOperation.
type documentWalk struct {
	ctx         context.Context
	fragments   ast.FragmentDefinitionList
	measured    map[string]selectionMeasure // fragments measured, by name
	walking     map[string]bool             // fragments being measured: a spread of one is a cycle
	visits      int
	introspects bool
	err         error // the first error; the walk unwinds without visiting more
}

// selectionMeasure is the measure of one selection set.
type selectionMeasure struct {
	depth  int
	fields int
}

func (w *documentWalk) selectionSet(set ast.SelectionSet) selectionMeasure {
	var m selectionMeasure
	for _, sel := range set {
		if w.err != nil {
			return m
		}
		if w.visits++; w.visits%ctxCheckEvery == 0 {
			if err := w.ctx.Err(); err != nil {
				w.err = err
				return m
			}
		}
		var child selectionMeasure
		switch sel := sel.(type) {
		case *ast.Field:
			if sel.Name == "__schema" || sel.Name == "__type" {
				w.introspects = true
			}
			child = w.selectionSet(sel.SelectionSet)
			child.depth++
			child.fields = saturatingAdd(child.fields, 1)
		case *ast.InlineFragment:
			child = w.selectionSet(sel.SelectionSet)
		case *ast.FragmentSpread:
			child = w.fragment(sel.Name)
		}
		m.depth = max(m.depth, child.depth)
		m.fields = saturatingAdd(m.fields, child.fields)
	}
	return m
}

// fragment measures the named fragment once and returns its cached measure
// after. An unknown fragment measures nothing (validation refuses it).
func (w *documentWalk) fragment(name string) selectionMeasure {
	if m, ok := w.measured[name]; ok {
		return m
	}
	if w.walking[name] {
		w.err = apperr.BadInput("fragment %s spreads itself", name)
		return selectionMeasure{}
	}
	def := w.fragments.ForName(name)
	if def == nil {
		w.measured[name] = selectionMeasure{}
		return selectionMeasure{}
	}
	w.walking[name] = true
	m := w.selectionSet(def.SelectionSet)
	delete(w.walking, name)
	if w.err == nil {
		w.measured[name] = m
	}
	return m
}

func saturatingAdd(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// fieldCount writes a count of fields that may have saturated.
func fieldCount(n int) string {
	if n == math.MaxInt {
		return "more than " + strconv.Itoa(math.MaxInt-1)
	}
	return strconv.Itoa(n)
}

// documentSize is what a whole parsed document holds: every operation and
// every fragment definition, used or not, as written (fragments are not
// expanded).
type documentSize struct {
	// selections counts the fields, fragment spreads and inline fragments:
	// validation compares them pairwise (OverlappingFieldsCanBeMerged), so
	// its work grows with their square.
	selections int
	// nodes counts the selections, arguments, values (each element of a
	// list or object too), directives, variable definitions and
	// definitions: the parsed tree's size (parsedDocumentBytes).
	nodes int
}

// measureDocument counts doc's selections and nodes in one walk over the
// tree the parser built, whose depth the token limit bounds.
func measureDocument(doc *ast.QueryDocument) documentSize {
	var n documentSize
	var value func(v *ast.Value)
	value = func(v *ast.Value) {
		if v == nil {
			return
		}
		n.nodes++
		for _, child := range v.Children {
			value(child.Value)
		}
	}
	arguments := func(args ast.ArgumentList) {
		for _, a := range args {
			n.nodes++
			value(a.Value)
		}
	}
	directives := func(ds ast.DirectiveList) {
		for _, d := range ds {
			n.nodes++
			arguments(d.Arguments)
		}
	}
	var selectionSet func(set ast.SelectionSet)
	selectionSet = func(set ast.SelectionSet) {
		for _, sel := range set {
			n.selections++
			n.nodes++
			switch sel := sel.(type) {
			case *ast.Field:
				arguments(sel.Arguments)
				directives(sel.Directives)
				selectionSet(sel.SelectionSet)
			case *ast.InlineFragment:
				directives(sel.Directives)
				selectionSet(sel.SelectionSet)
			case *ast.FragmentSpread:
				directives(sel.Directives)
			}
		}
	}
	for _, op := range doc.Operations {
		n.nodes++
		for _, v := range op.VariableDefinitions {
			n.nodes++
			value(v.DefaultValue)
			directives(v.Directives)
		}
		directives(op.Directives)
		selectionSet(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		n.nodes++
		directives(f.Directives)
		selectionSet(f.SelectionSet)
	}
	return n
}

// What a parsed and validated document holds in memory beside its text,
// per selection and per other node of its tree (TestParsedDocumentBytesEstimate
// measures documents of every shape within a factor of 1.5 of it; their
// text is a twentieth to a fiftieth of the whole).
const (
	parsedSelectionBytes = 300
	parsedNodeBytes      = 200
)

// parsedDocumentBytes estimates what the parsed document doc of query holds
// in memory: its text, which it keeps, and its tree.
func parsedDocumentBytes(query string, doc *ast.QueryDocument) int {
	n := measureDocument(doc)
	return len(query) + parsedSelectionBytes*n.selections + parsedNodeBytes*(n.nodes-n.selections)
}
