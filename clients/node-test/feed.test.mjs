// A real-client test of the feed service: @apollo/client over HTTP for
// queries and mutations, GraphQLWsLink (graphql-ws, graphql-transport-ws
// subprotocol) for subscriptions, against the server at SERVER_URL
// (e.g. http://127.0.0.1:8080). Run with `node --test` in this folder;
// api/node_client_test.go starts a server and runs it.
//
// Nothing here speaks the protocol by hand: every operation goes through
// Apollo, and the websocket through graphql-ws's createClient.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';

import { ApolloClient, ApolloLink, CombinedGraphQLErrors, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition, relayStylePagination } from '@apollo/client/utilities';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const SERVER_URL = process.env.SERVER_URL;
if (!SERVER_URL) {
  throw new Error('SERVER_URL is not set (the server base URL, e.g. http://127.0.0.1:8080)');
}
const HTTP_URL = new URL('/query', SERVER_URL).toString();
const WS_URL = HTTP_URL.replace(/^http/, 'ws');

// How long any awaited server event may take to arrive.
const EVENT_TIMEOUT_MS = 10_000 * (Number(process.env.TEST_TIME_SCALE) || 1); // the Go test passes its time scale

// ---------------------------------------------------------------------------
// Documents

const SIGN_UP = gql`
  mutation SignUp($input: SignUpInput!) {
    signUp(input: $input) { token user { id username } }
  }
`;

const FOLLOW = gql`
  mutation Follow($userId: ID!) {
    follow(userId: $userId) {
      user { id username followerCount }
      viewer { id username followingCount }
    }
  }
`;

const CREATE_POST = gql`
  mutation CreatePost($input: CreatePostInput!) {
    createPost(input: $input) { post { id body author { id username } } }
  }
`;

const MARK_FEED_READ = gql`
  mutation MarkFeedRead($upTo: String) {
    markFeedRead(upTo: $upTo) { unreadCount }
  }
`;

const UNREAD_COUNT = gql`
  subscription UnreadCount { unreadCount }
`;

const FEED_ITEM_ADDED = gql`
  subscription FeedItemAdded {
    feedItemAdded {
      cursor
      node {
        post { id body author { id username } }
        reposters { id username }
        addedAt
      }
    }
  }
`;

const FEED = gql`
  query Feed($first: Int, $after: String) {
    feed(first: $first, after: $after) {
      edges {
        cursor
        node {
          post { id body author { id username } }
          reposters { id username }
          addedAt
        }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
`;

const VIEWER = gql`
  query Viewer { viewer { id username } }
`;

// The report's document: a deferred fragment with a non-null connection.
const VIEWER_DEFERRED = gql`
  query ViewerDeferred {
    viewer { id ... @defer(label: "x") { username followers(first: 2) { totalCount } } }
  }
`;

// ---------------------------------------------------------------------------
// Clients

const disposers = [];

function newCache() {
  return new InMemoryCache({
    typePolicies: {
      Query: { fields: { feed: relayStylePagination() } },
    },
  });
}

/**
 * An Apollo client as the holder of token (signed out when null): HTTP for
 * queries and mutations, a graphql-ws websocket for subscriptions. `closes`
 * records every close event of the websocket.
 */
function apolloClient(token, { retryAttempts = 0 } = {}) {
  const authorization = token ? `Bearer ${token}` : undefined;
  const httpLink = new HttpLink({
    uri: HTTP_URL,
    headers: authorization ? { Authorization: authorization } : {},
  });
  const closes = [];
  const wsClient = createClient({
    url: WS_URL,
    webSocketImpl: WebSocket,
    connectionParams: authorization ? { Authorization: authorization } : {},
    retryAttempts,
    on: { closed: (event) => closes.push({ code: event.code, reason: event.reason }) },
  });
  const link = ApolloLink.split(
    ({ query }) => {
      const def = getMainDefinition(query);
      return def.kind === 'OperationDefinition' && def.operation === 'subscription';
    },
    new GraphQLWsLink(wsClient),
    httpLink,
  );
  const client = new ApolloClient({ link, cache: newCache() });
  const dispose = async () => {
    client.stop();
    await wsClient.dispose();
  };
  disposers.push(dispose);
  return { client, wsClient, closes, dispose };
}

async function disposeAll() {
  await Promise.allSettled(disposers.splice(0).map((d) => d()));
}

function uniqueName(prefix) {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
}

async function signUp(username) {
  const { client } = apolloClient(null);
  const { data } = await client.mutate({
    mutation: SIGN_UP,
    variables: { input: { username, password: `password-${username}`, displayName: username } },
  });
  assert.ok(data?.signUp?.token, `signUp(${username}) returned no token: ${JSON.stringify(data)}`);
  assert.equal(data.signUp.user.username, username);
  return { token: data.signUp.token, id: data.signUp.user.id, username };
}

// ---------------------------------------------------------------------------
// Waiting for events

/**
 * Collects the values of an Apollo subscription; `until` waits (with a
 * timeout) for the values so far to satisfy a predicate.
 */
class Collector {
  // pick maps a result to the value to keep (undefined: keep nothing).
  constructor(label, pick = (result) => result.data) {
    this.label = label;
    this.pick = pick;
    this.values = [];
    this.errors = [];
    this.waiters = [];
  }

  observer() {
    return {
      next: (result) => {
        if (result.error) {
          this.errors.push(result.error);
        } else {
          const value = this.pick(result);
          if (value !== undefined) this.values.push(value);
        }
        this.check();
      },
      error: (err) => {
        this.errors.push(err);
        this.check();
      },
    };
  }

  check() {
    for (const w of [...this.waiters]) {
      if (this.errors.length > 0) {
        w.reject(new Error(`${this.label}: error while waiting for ${w.what}: ${describeError(this.errors[0])}`));
      } else if (w.pred(this.values)) {
        w.resolve(this.values);
      } else {
        continue;
      }
      clearTimeout(w.timer);
      this.waiters.splice(this.waiters.indexOf(w), 1);
    }
  }

  until(what, pred, timeoutMs = EVENT_TIMEOUT_MS) {
    return new Promise((resolve, reject) => {
      const w = { what, pred, resolve, reject };
      w.timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        reject(new Error(`${this.label}: timed out after ${timeoutMs} ms waiting for ${what}; ` +
          `received so far: ${JSON.stringify(this.values)}`));
      }, timeoutMs);
      this.waiters.push(w);
      this.check();
    });
  }
}

function describeError(err) {
  if (err && typeof err === 'object' && 'code' in err && 'reason' in err) {
    return `close event ${err.code} ${err.reason}`;
  }
  if (err instanceof Error) {
    const codes = err.errors?.map((e) => e.extensions?.code).filter(Boolean) ?? [];
    return `${err.name}: ${err.message}${codes.length ? ` (codes ${codes.join(', ')})` : ''}`;
  }
  return JSON.stringify(err) ?? String(err);
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------------------
// Tests

test('feed through Apollo Client: live subscriptions, paging, read marker', async (t) => {
  t.after(disposeAll);

  const runId = randomBytes(3).toString('hex');
  const a = await signUp(uniqueName('a'));
  const b = await signUp(uniqueName('b'));
  const A = apolloClient(a.token);
  const B = apolloClient(b.token);

  await t.test('the HTTP link carries the bearer token', async () => {
    const { data } = await B.client.query({ query: VIEWER, fetchPolicy: 'network-only' });
    assert.equal(data.viewer?.username, b.username);
  });

  await t.test('B follows A', async () => {
    const { data } = await B.client.mutate({ mutation: FOLLOW, variables: { userId: a.id } });
    assert.equal(data.follow.user.id, a.id);
    assert.equal(data.follow.user.followerCount, 1);
    assert.equal(data.follow.viewer.followingCount, 1);
  });

  // B's subscriptions, over one graphql-ws websocket.
  const unread = new Collector('unreadCount');
  const added = new Collector('feedItemAdded');
  // feedItemAdded first: graphql-transport-ws has no acknowledgement of a
  // subscribe message, and feedItemAdded sends nothing until an entry
  // arrives. The server (gqlgen) starts each subscription in its own
  // goroutine in the order received, so the first unreadCount value, plus a
  // short grace, is the best sign a client has that feedItemAdded is live.
  const subs = [
    B.client.subscribe({ query: FEED_ITEM_ADDED }).subscribe(added.observer()),
    B.client.subscribe({ query: UNREAD_COUNT }).subscribe(unread.observer()),
  ];
  t.after(() => subs.forEach((s) => s.unsubscribe()));

  await t.test('unreadCount delivers the current value at once', async () => {
    const values = await unread.until('the first unreadCount', (v) => v.length >= 1);
    assert.equal(values[0].unreadCount, 0);
  });

  await new Promise((r) => setTimeout(r, 250));

  const bodies = [1, 2, 3].map((i) => `post ${i} of run ${runId}`);
  const posts = [];

  await t.test('A creates 3 posts', async () => {
    for (const body of bodies) {
      const { data } = await A.client.mutate({ mutation: CREATE_POST, variables: { input: { body } } });
      assert.equal(data.createPost.post.body, body);
      assert.equal(data.createPost.post.author.username, a.username);
      posts.push(data.createPost.post);
    }
  });

  await t.test('B receives unread counts rising to 3', async (t) => {
    const values = await unread.until('unreadCount 3', (v) => v.some((d) => d.unreadCount === 3));
    const counts = values.map((d) => d.unreadCount);
    t.diagnostic(`unread counts received: ${JSON.stringify(counts)}`);
    for (let i = 1; i < counts.length; i++) {
      assert.ok(counts[i] >= counts[i - 1], `unread counts went down: ${JSON.stringify(counts)}`);
    }
    assert.ok(counts.every((c) => c >= 0 && c <= 3), `unread counts out of range: ${JSON.stringify(counts)}`);
  });

  await t.test('B receives 3 feedItemAdded events with the right posts', async (t) => {
    const values = await added.until('3 feedItemAdded events', (v) => v.length >= 3);
    const edges = values.map((d) => d.feedItemAdded);
    t.diagnostic(`feedItemAdded order: ${JSON.stringify(edges.map((e) => e.node.post.body))}`);
    assert.deepEqual(edges.map((e) => e.node.post.body).sort(), [...bodies].sort());
    assert.deepEqual(edges.map((e) => e.node.post.id).sort(), posts.map((p) => p.id).sort());
    for (const e of edges) {
      assert.equal(e.node.post.author.username, a.username);
      assert.deepEqual(e.node.reposters, []);
      assert.equal(typeof e.cursor, 'string');
      assert.ok(e.cursor.length > 0);
      assert.ok(!Number.isNaN(Date.parse(e.node.addedAt)), `addedAt is not a time: ${e.node.addedAt}`);
    }
    // No more than 3 arrive.
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(added.values.length, 3, `extra feedItemAdded events: ${JSON.stringify(added.values)}`);
  });

  await t.test('B pages the feed with fetchMore; relayStylePagination merges it', async () => {
    const watch = B.client.watchQuery({ query: FEED, variables: { first: 2 }, fetchPolicy: 'network-only' });
    // What the watcher delivers once loaded: the first page, then the
    // merged pages as fetchMore writes them to the cache.
    const watched = new Collector('feed watchQuery', (r) => (r.loading ? undefined : r.data));
    const sub = watch.subscribe(watched.observer());
    try {
      const [first] = await watched.until('feed(first: 2)', (v) => v.length >= 1);
      assert.equal(first.feed.edges.length, 2, `first page: ${JSON.stringify(first.feed)}`);
      let pageInfo = first.feed.pageInfo;
      let pages = 1;
      while (pageInfo.hasNextPage) {
        assert.ok(pages < 10, 'paging does not end');
        assert.ok(pageInfo.endCursor, `hasNextPage without an endCursor: ${JSON.stringify(pageInfo)}`);
        const more = await withTimeout(
          watch.fetchMore({ variables: { first: 2, after: pageInfo.endCursor } }),
          EVENT_TIMEOUT_MS, `fetchMore(after: ${pageInfo.endCursor})`);
        pageInfo = more.data.feed.pageInfo;
        pages++;
      }
      assert.equal(pages, 2, 'three entries in pages of two make two pages');

      const want = [...posts].reverse();
      const check = (label, feed) => {
        assert.deepEqual(feed.edges.map((e) => e.node.post.id), want.map((p) => p.id),
          `${label}: want the 3 posts once each, newest first; got ${JSON.stringify(feed.edges.map((e) => e.node.post.body))}`);
        assert.deepEqual(feed.edges.map((e) => e.node.post.body), want.map((p) => p.body));
        assert.equal(feed.pageInfo.hasNextPage, false, `${label}: merged pageInfo ${JSON.stringify(feed.pageInfo)}`);
      };
      // The merged result in the cache...
      check('cache', B.client.readQuery({ query: FEED, variables: { first: 2 } }).feed);
      // ...and as the watcher delivers it (a cache broadcast, not at once).
      const values = await watched.until('the merged feed on the watcher', (v) => v.at(-1).feed.edges.length >= 3);
      check('watchQuery', values.at(-1).feed);
    } finally {
      sub.unsubscribe();
    }
  });

  await t.test('markFeedRead sends unreadCount 0 on the subscription', async () => {
    const before = unread.values.length;
    const { data } = await B.client.mutate({ mutation: MARK_FEED_READ, variables: { upTo: null } });
    assert.equal(data.markFeedRead.unreadCount, 0);
    await unread.until('unreadCount 0 after markFeedRead',
      (v) => v.slice(before).some((d) => d.unreadCount === 0));
    assert.equal(unread.values.at(-1).unreadCount, 0,
      `the last unread count is not 0: ${JSON.stringify(unread.values.map((d) => d.unreadCount))}`);
  });

  assert.deepEqual(B.closes, [], 'B\'s websocket closed during the test');
});

test('a websocket with a bad token is refused with 4403', async (t) => {
  t.after(disposeAll);

  const bad = apolloClient('not-a-valid-token');
  const outcome = await withTimeout(new Promise((resolve) => {
    bad.client.subscribe({ query: UNREAD_COUNT }).subscribe({
      next: (r) => resolve({ kind: r.error ? 'error' : 'next', value: r.error ?? r.data }),
      error: (err) => resolve({ kind: 'error', value: err }),
      complete: () => resolve({ kind: 'complete' }),
    });
  }), EVENT_TIMEOUT_MS, 'the refusal of a bad token');

  assert.equal(outcome.kind, 'error', `the subscription was not refused: ${JSON.stringify(outcome)}`);
  assert.match(String(outcome.value?.message), /4403/, `Apollo error: ${describeError(outcome.value)}`);
  assert.ok(bad.closes.length >= 1, 'graphql-ws saw no close event');
  assert.equal(bad.closes[0].code, 4403, `close events: ${JSON.stringify(bad.closes)}`);
  t.diagnostic(`close event: ${JSON.stringify(bad.closes[0])}; Apollo error: ${outcome.value.message}`);

  // The same without Apollo: graphql-ws's own sink gets the close event.
  const raw = createClient({
    url: WS_URL,
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: 'Bearer not-a-valid-token' },
    retryAttempts: 0,
  });
  disposers.push(() => raw.dispose());
  const err = await withTimeout(new Promise((resolve) => {
    raw.subscribe({ query: 'subscription { unreadCount }' }, {
      next: (v) => resolve({ unexpected: v }),
      error: resolve,
      complete: () => resolve({ unexpected: 'complete' }),
    });
  }), EVENT_TIMEOUT_MS, 'graphql-ws refusal');
  assert.equal(err?.code, 4403, `graphql-ws sink got ${describeError(err)}`);
});

test('@defer is refused with BAD_USER_INPUT: Apollo gets the error, never a null', async (t) => {
  t.after(disposeAll);

  const user = await signUp(uniqueName('d'));
  // As an app that uses @defer sets Apollo up: the handler of the
  // incremental format gqlgen speaks, which makes the HTTP link ask for
  // multipart/mixed. The fetch records what went and what came back.
  const seen = [];
  const fetchAndRecord = async (url, init) => {
    const res = await fetch(url, init);
    seen.push({ accept: new Headers(init.headers).get('accept'), status: res.status, type: res.headers.get('content-type') });
    return res;
  };
  const client = new ApolloClient({
    link: new HttpLink({ uri: HTTP_URL, headers: { Authorization: `Bearer ${user.token}` }, fetch: fetchAndRecord }),
    cache: new InMemoryCache(),
    incrementalHandler: new Defer20220824Handler(),
  });
  disposers.push(async () => client.stop());

  const result = await withTimeout(
    client.query({ query: VIEWER_DEFERRED, fetchPolicy: 'network-only', errorPolicy: 'all' }),
    EVENT_TIMEOUT_MS, 'the answer to a deferred query');
  t.diagnostic(`request and answer: ${JSON.stringify(seen)}; Apollo error: ${describeError(result.error)}`);

  assert.match(String(seen[0]?.accept), /multipart\/mixed/, 'Apollo did not ask for multipart/mixed');
  assert.ok(result.data == null, `the query answered data: ${JSON.stringify(result.data)}`);
  // Apollo asks for application/graphql-response+json too, so the refusal
  // (HTTP 400 in that format) reaches it as the server's GraphQL errors.
  assert.ok(CombinedGraphQLErrors.is(result.error), `Apollo error: ${describeError(result.error)}`);
  const { errors } = result.error;
  assert.equal(errors[0]?.extensions?.code, 'BAD_USER_INPUT', `Apollo error: ${describeError(result.error)}`);
  assert.match(errors[0]?.message ?? '', /@defer/);

  // Without @defer, the same fields come in one answer, none of them null.
  const { data } = await client.query({
    query: gql`query ViewerWhole { viewer { id username followers(first: 2) { totalCount } } }`,
    fetchPolicy: 'network-only',
  });
  assert.equal(data.viewer.username, user.username);
  assert.equal(data.viewer.followers.totalCount, 0);
});
