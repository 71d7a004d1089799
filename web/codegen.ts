// graphql-codegen (`npm run codegen`, part of `npm run build` and `make
// web`): the TypeScript types of every document the app sends, made from
// the server's schema (../schema.graphqls) and the documents in src/
// (src/graphql.ts), into src/gql/, which is committed. The test command
// runs `npm run codegen:check` and `npm run typecheck` (web/codegen_test.go):
// a stale src/gql/, a document the schema does not answer, or app code that
// no longer fits the generated types fails it.
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  schema: '../schema.graphqls',
  documents: ['src/**/*.{ts,tsx}', '!src/gql/**'],
  generates: {
    // The client preset: a typed graphql() function and a TypedDocumentNode
    // per document, which Apollo's hooks read their data and variables
    // types from. Fragments are not masked: a component reads the fields of
    // the fragments it is given, as Apollo returns them.
    'src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        scalars: { Time: 'string' },
        enumsAsTypes: true,
        useTypeImports: true,
      },
    },
    // The members of the schema's unions and interfaces, for the cache's
    // possibleTypes (src/apollo.ts).
    'src/gql/possibleTypes.ts': {
      plugins: ['fragment-matcher'],
      config: { apolloClientVersion: 3, useExplicitTyping: true },
    },
  },
};

export default config;
