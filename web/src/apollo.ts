// The Apollo Client of one signed-in person (or of nobody): queries and
// mutations over HTTP POST to /query with the bearer token in the
// Authorization header, subscriptions over a graphql-ws websocket on the
// same endpoint with the token in the connection_init payload.
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { CombinedGraphQLErrors } from '@apollo/client/errors';
import { ErrorLink } from '@apollo/client/link/error';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition, relayStylePagination } from '@apollo/client/utilities';
import { createClient, type Client as WsClient } from 'graphql-ws';

import schemaTypes from './gql/possibleTypes';

/** The GraphQL endpoint, on the origin that served the app. */
export const GRAPHQL_URL = new URL('/query', window.location.href).toString();
const WS_URL = GRAPHQL_URL.replace(/^http/, 'ws');

// Close codes of the server's websocket (see the README's Subscriptions).
const CLOSE_UNAUTHORIZED = 4401;
const CLOSE_FORBIDDEN = 4403; // a bad or expired token

export function newCache(): InMemoryCache {
  return new InMemoryCache({
    // The members of the schema's unions and interfaces (the home
    // connection's HomeEntry among them, generated from the schema), so
    // that the cache can match the fragments on each kind.
    possibleTypes: schemaTypes.possibleTypes,
    typePolicies: {
      Query: {
        fields: {
          // One list per viewer: pages fetched with first/after append
          // older entries, pages fetched with last/before prepend newer
          // ones.
          feed: relayStylePagination(),
          // The same for the home connection, whose cursors are its own.
          home: relayStylePagination(),
          // The viewer's muted and blocked lists, scrolled.
          blockedUsers: relayStylePagination(),
          mutedUsers: relayStylePagination(),
          // The viewer's lists, paged through by the Lists page and the
          // profile's list switches.
          lists: relayStylePagination(),
        },
      },
      List: {
        fields: {
          // A list's members, read on by a profile's switch of the list.
          members: relayStylePagination(),
        },
      },
      User: {
        fields: {
          timeline: relayStylePagination(),
          // A page jump (offset) is a list of its own, never merged
          // into the scrolled one.
          followers: relayStylePagination(['offset']),
          following: relayStylePagination(['offset']),
        },
      },
    },
  });
}

export interface Session {
  client: ApolloClient;
  /** Stops the client and closes its websocket. */
  dispose: () => void;
}

/**
 * newSession makes the client of the holder of token (signed out when
 * null). onTokenRefused is called when the server refuses the token (it
 * expired, or the server's secret changed): the app then signs out.
 */
export function newSession(token: string | null, onTokenRefused: () => void): Session {
  const authorization = token ? `Bearer ${token}` : null;

  const http = new HttpLink({
    uri: GRAPHQL_URL,
    headers: authorization ? { Authorization: authorization } : {},
  });

  const refused = new ErrorLink(({ error }) => {
    if (authorization && CombinedGraphQLErrors.is(error) &&
      error.errors.some((e) => e.extensions?.code === 'UNAUTHENTICATED')) {
      onTokenRefused();
    }
  });

  let ws: WsClient | null = null;
  let link: ApolloLink = ApolloLink.from([refused, http]);
  if (authorization) {
    // Every subscription needs a viewer, so there is a websocket only when
    // signed in. It opens with the first subscription and reconnects
    // after a drop, but not when the server refused the token.
    ws = createClient({
      url: WS_URL,
      connectionParams: { Authorization: authorization },
      retryAttempts: Infinity,
      shouldRetry: (event) => !isCloseCode(event, CLOSE_FORBIDDEN, CLOSE_UNAUTHORIZED),
      on: {
        closed: (event) => {
          if (isCloseCode(event, CLOSE_FORBIDDEN, CLOSE_UNAUTHORIZED)) onTokenRefused();
        },
      },
    });
    link = ApolloLink.split(
      ({ query }) => {
        const def = getMainDefinition(query);
        return def.kind === 'OperationDefinition' && def.operation === 'subscription';
      },
      new GraphQLWsLink(ws),
      link,
    );
  }

  const client = new ApolloClient({ link, cache: newCache() });
  return {
    client,
    dispose: () => {
      client.stop();
      void ws?.dispose();
    },
  };
}

function isCloseCode(event: unknown, ...codes: number[]): boolean {
  return typeof event === 'object' && event !== null && 'code' in event &&
    codes.includes((event as { code: number }).code);
}
