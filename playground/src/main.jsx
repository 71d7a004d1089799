// The feed service's GraphiQL page. Everything it needs (GraphiQL, React,
// the Monaco editor and its workers, graphql-ws) is bundled into dist/ and
// served by the server itself: no CDN.
import 'graphiql/setup-workers/vite';
import 'graphiql/style.css';

import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import { createGraphiQLFetcher } from '@graphiql/toolkit';

import example from './example.graphql?raw';

// The GraphQL endpoint (index.html names it: /query on the server that
// served this page), over HTTP for queries and mutations and over a
// websocket (graphql-ws) for subscriptions.
const endpoint = document.querySelector('meta[name="graphql-endpoint"]')?.content || '/query';
const url = new URL(endpoint, window.location.href);
const wsUrl = new URL(url);
wsUrl.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';

// A subscription opens its own websocket, whose connection_init payload is
// the Headers pane: {"Authorization": "Bearer <token>"} is what the server
// reads there.
const fetcher = createGraphiQLFetcher({
  url: url.toString(),
  subscriptionUrl: wsUrl.toString(),
  enableIncrementalDelivery: false,
});

const defaultHeaders = `{
  // After SignUp or LogIn, put the token here:
  // "Authorization": "Bearer <token>"
}`;

createRoot(document.getElementById('graphiql')).render(
  <StrictMode>
    <GraphiQL
      fetcher={fetcher}
      defaultQuery={example}
      defaultHeaders={defaultHeaders}
      initialHeaders={defaultHeaders}
      initialVariables={'{\n  "userId": ""\n}'}
      defaultEditorToolsVisibility="headers"
    />
  </StrictMode>,
);
