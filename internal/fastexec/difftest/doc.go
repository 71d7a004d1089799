// Package difftest holds the differential test of the fast executor
// (graph.NewFastExecutableSchema) against gqlgen's own
// (graph.NewExecutableSchema): see TestFastExecutorMatchesGqlgen.
package difftest
