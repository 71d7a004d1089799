// Browser tests of the feed service's two clients, in Debian's Chromium
// driven by playwright-core (no browser download), against the server at
// SERVER_URL (e.g. http://127.0.0.1:8080):
//
// - the GraphiQL page at / works with every host but the server blocked:
//   it runs a query from its example document and receives a subscription
//   event over graphql-ws;
// - the React app at /app/: two people sign up in two browser contexts, B
//   follows A, A posts, and B's red dot, "new posts" bar and feed follow
//   live; B then scrolls the whole feed, which holds every entry once;
// - the app's home shows entries of other kinds: a suggested user whose
//   Follow button follows, a promoted post with its "Promoted" label, and
//   a suggestion dismissed for good;
// - mute and block: Mute on a followee's profile takes their post out of
//   the feed and Unmute brings it back; Block ends the follow and takes it
//   out too, and the blocked list's Unblock undoes it;
// - protected accounts: the switch on one's own profile, a request made
//   with a protected profile's button ("Requested"), and the requests
//   approved and rejected on the owner's profile;
// - lists: a list made on the Lists page, a followee added with their
//   profile's switch, its feed holding their post alone, renamed, emptied
//   and deleted; a profile's switches paging through eleven lists ("More
//   lists") and through a list's 101 members to find the profile's user,
//   and the list's page showing its members 20 at a time (More members);
// - CORS: a page on CORS_ORIGIN (listed in the server's ALLOWED_ORIGINS)
//   fetches /query with a bearer token through a preflight; a page on an
//   unlisted origin is refused by the browser.
//
// Screenshots of the app's feed, a profile page and the blocked list go to SCREENSHOT_DIR
// when it is set (api/browser_test.go sets docs/). Nothing in them changes
// from run to run, so that they are rewritten only when the app changes. Run with `node --test` in this folder; api/browser_test.go
// starts a server and runs it.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { chromium } from 'playwright-core';

const SERVER_URL = process.env.SERVER_URL;
if (!SERVER_URL) {
  throw new Error('SERVER_URL is not set (the server base URL, e.g. http://127.0.0.1:8080)');
}
const SERVER = new URL(SERVER_URL);
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const SCREENSHOT_DIR = process.env.SCREENSHOT_DIR || '';

// How long one awaited thing in the page may take.
const TIMEOUT_MS = 15_000 * (Number(process.env.TEST_TIME_SCALE) || 1); // the Go test passes its time scale

// ---------------------------------------------------------------------------
// The browser

let browser;
let profileDir;

before(async () => {
  // launch() gives the browser a fresh temporary profile of its own (it
  // refuses a --user-data-dir argument); TMPDIR puts it under a folder
  // that this test removes.
  profileDir = await mkdtemp(path.join(tmpdir(), 'feed-browser-test-'));
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    env: { ...process.env, TMPDIR: profileDir },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});

after(async () => {
  await browser?.close();
  if (profileDir) await rm(profileDir, { recursive: true, force: true });
});

/**
 * A browser context (a separate person: own cookies and storage) whose
 * requests to any host but the server are aborted and recorded, and whose
 * page errors and Content-Security-Policy violations are recorded (the
 * pages' event for each, and Chromium's console error for each, which
 * also covers the workers).
 */
async function newContext() {
  const context = await browser.newContext({ viewport: { width: 1100, height: 860 } });
  context.setDefaultTimeout(TIMEOUT_MS);
  const blocked = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.host === SERVER.host || url.protocol === 'data:' || url.protocol === 'blob:') {
      return route.continue();
    }
    blocked.push(url.toString());
    return route.abort('internetdisconnected');
  });
  const errors = [];
  context.on('weberror', (e) => errors.push(String(e.error())));
  const cspViolations = [];
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}`));
  });
  context.on('console', (msg) => {
    if (msg.type() === 'error' && /Content Security Policy|CSP violation/i.test(msg.text())) cspViolations.push(msg.text());
  });
  return { context, blocked, errors, cspViolations };
}

/** Checks that a page came with its Content-Security-Policy and the rest. */
function assertSecurityHeaders(res, what) {
  const h = res.headers();
  assert.match(h['content-security-policy'] ?? '', /script-src 'self';.*frame-ancestors 'none'/, `${what}: Content-Security-Policy`);
  assert.equal(h['x-frame-options'], 'DENY', `${what}: X-Frame-Options`);
  assert.equal(h['x-content-type-options'], 'nosniff', `${what}: X-Content-Type-Options`);
}

/** Polls pred until it holds. */
async function waitFor(pred, what, detail, timeoutMs = TIMEOUT_MS) {
  const until = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(detail)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Saves what each page of the contexts shows, to see why a test failed. */
async function saveFailure(contexts) {
  const dir = await mkdtemp(path.join(tmpdir(), 'feed-browser-failure-'));
  let n = 0;
  for (const { context } of contexts) {
    for (const page of context.pages()) {
      const file = path.join(dir, `page-${++n}.png`);
      await page.screenshot({ path: file, fullPage: true }).catch(() => {});
      console.log(`failure screenshot of ${page.url()}: ${file}`);
    }
  }
}

async function screenshot(page, name) {
  if (!SCREENSHOT_DIR) return;
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, name) });
}

/**
 * Runs body with a new context (see newContext), then checks that what
 * it showed (what: 'page' or 'app') asked for nothing from another host,
 * threw nothing and kept to its Content-Security-Policy. On a failure it
 * logs the CSP violations and saves what the pages show; in the end it
 * closes the context.
 */
async function inNewContext(what, body) {
  const c = await newContext();
  try {
    await body(c);
    assert.deepEqual(c.blocked, [], `the ${what} asked for something from another host`);
    assert.deepEqual(c.errors, [], `the ${what} threw`);
    assert.deepEqual(c.cspViolations, [], `the ${what} broke its Content-Security-Policy`);
  } catch (err) {
    if (c.cspViolations.length) console.log('CSP violations:', c.cspViolations);
    await saveFailure([c]);
    throw err;
  } finally {
    await c.context.close();
  }
}

// ---------------------------------------------------------------------------
// The API, for what the tests arrange outside the browser

async function api(query, variables = {}, token = null) {
  const res = await fetch(new URL('/query', SERVER), {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  if (body.errors?.length) {
    throw new Error(`API errors for ${query.split('{')[0].trim()}: ${JSON.stringify(body.errors)}`);
  }
  return body.data;
}

async function apiSignUp(username, displayName) {
  const data = await api(
    'mutation($input: SignUpInput!) { signUp(input: $input) { token user { id username } } }',
    { input: { username, password: `password-${username}`, displayName } },
  );
  return { token: data.signUp.token, id: data.signUp.user.id, username };
}

const apiPost = async (token, body) =>
  (await api('mutation($b: String!) { createPost(input: {body: $b}) { post { id body } } }', { b: body }, token))
    .createPost.post;

// ---------------------------------------------------------------------------
// GraphiQL

/**
 * Replaces the text of one of GraphiQL's Monaco editors (operation,
 * variables, headers) by typing.
 */
async function setEditor(page, which, text) {
  const editor = page.locator(`.monaco-editor[data-uri*="${which}"]`);
  await editor.click();
  await page.keyboard.press('ControlOrMeta+KeyA');
  await page.keyboard.press('Delete');
  // insertText types the whole text at once: no auto-closed brackets.
  await page.keyboard.insertText(text);
}

/**
 * Waits until GraphiQL's response pane shows text. The pane wraps long
 * lines, so whitespace is left out of the comparison.
 */
async function responseShows(page, text) {
  await page.waitForFunction((want) => {
    const shown = document.querySelector('.graphiql-response')?.innerText ?? '';
    return shown.replace(/\s+/g, '').includes(want);
  }, text.replace(/\s+/g, ''));
}

/**
 * Runs one operation of the document by name, through the run button's
 * menu, and returns the server's answer once the response pane shows it.
 */
async function runOperation(page, name) {
  const answer = page.waitForResponse((r) =>
    new URL(r.url()).pathname === '/query' && r.request().method() === 'POST' &&
    r.request().postDataJSON()?.operationName === name);
  await page.locator('.graphiql-execute-button').click();
  await page.getByRole('menuitem', { name, exact: true }).click();
  const body = await (await answer).json();
  await responseShows(page, JSON.stringify(body.data ?? body.errors));
  return body;
}

/** Starts a subscription by name; it keeps running in the page. */
async function startSubscription(page, name) {
  await page.locator('.graphiql-execute-button').click();
  await page.getByRole('menuitem', { name, exact: true }).click();
}

test('the GraphiQL page works offline: a query and a subscription event', async () => {
  await inNewContext('page', async ({ context }) => {
    // Someone to find and follow, and who posts.
    const alice = await apiSignUp('alice', 'Alice');

    const page = await context.newPage();
    const res = await page.goto(new URL('/', SERVER).toString());
    assertSecurityHeaders(res, 'GraphiQL');
    await page.locator('.graphiql-container').waitFor();
    // The example document opens in the editor. Its first line is awaited:
    // Monaco draws only the lines in view, and the document's opening
    // comment is long enough to push its operations below them. The run
    // menu (runOperation) shows that its operations are there.
    await page.getByText('# Feed service GraphiQL.').first().waitFor();

    // The example's SignUp, as it stands, then its FindUser query.
    const signUp = await runOperation(page, 'SignUp');
    assert.equal(signUp.data?.signUp.user.username, 'ada', JSON.stringify(signUp));
    const token = signUp.data.signUp.token;

    const found = await runOperation(page, 'FindUser');
    assert.equal(found.data?.user?.id, alice.id, JSON.stringify(found));

    // The token goes in the Headers pane, for HTTP and for the websocket.
    await page.getByRole('button', { name: 'Headers' }).click();
    await setEditor(page, 'headers', JSON.stringify({ Authorization: `Bearer ${token}` }));
    await api('mutation($id: ID!) { follow(userId: $id) { viewer { followingCount } } }', { id: alice.id }, token);

    // NewEntries stays open over a graphql-ws websocket whose
    // connection_init carries the Headers pane; Alice's post arrives on it.
    const frames = [];
    page.on('websocket', (ws) => {
      if (new URL(ws.url()).pathname !== '/query') return;
      ws.on('framesent', (f) => frames.push({ sent: String(f.payload) }));
      ws.on('framereceived', (f) => frames.push({ received: String(f.payload) }));
    });
    await startSubscription(page, 'NewEntries');
    // graphql-transport-ws acknowledges the connection, not the
    // subscription, and nothing says when the server has started it: a post
    // made before then never arrives. So Alice posts again each few seconds
    // until a post of hers arrives on the websocket.
    await waitFor(() => frames.some((f) => f.received?.includes('connection_ack')), 'connection_ack', frames);
    const nextFrame = () => frames.map((f) => f.received && JSON.parse(f.received)).find((m) => m?.type === 'next');
    const posted = [];
    for (const until = Date.now() + TIMEOUT_MS; !nextFrame(); ) {
      if (Date.now() > until) throw new Error(`no post of ${posted.length} arrived: ${JSON.stringify(frames)}`);
      const body = `offline GraphiQL event ${Date.now()}`;
      posted.push(body);
      await apiPost(alice.token, body);
      const again = Date.now() + 3000;
      while (!nextFrame() && Date.now() < again) await new Promise((r) => setTimeout(r, 50));
    }
    const next = nextFrame();
    const body = next.payload.data.feedItemAdded.node.post.body;
    assert.ok(posted.includes(body), `the event's post ${body} is not one of ${JSON.stringify(posted)}`);
    await responseShows(page, body);
    const init = frames.map((f) => f.sent && JSON.parse(f.sent)).find((m) => m?.type === 'connection_init');
    assert.equal(init?.payload?.Authorization, `Bearer ${token}`, 'connection_init does not carry the Headers pane');
    assert.equal(next.payload.data.feedItemAdded.node.post.author.username, 'alice');
  });
});

// ---------------------------------------------------------------------------
// The React app

const APP_URL = new URL('/app/', SERVER).toString();

/** Signs up through the app's form; returns the token the app keeps. */
async function signUpInApp(page, username, displayName) {
  await page.goto(APP_URL);
  await page.getByRole('tab', { name: 'Sign up' }).click();
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(`password-${username}`);
  await page.getByLabel('Display name').fill(displayName);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
  return page.evaluate(() => localStorage.getItem('feedservice.token'));
}

/** The post ids of the home feed's entries, top to bottom. */
const feedPostIds = (page) =>
  page.locator('[data-testid="feed-entry"]').evaluateAll((els) => els.map((el) => el.dataset.postId));

const bodies = [
  'Shipped the new follow button today. Small change, big smile.',
  'Reading about Relay cursors: opaque strings are a kindness to clients.',
  'Coffee first, fan-out second.',
  'Pagination that never repeats an entry is harder than it looks.',
  'Tried the red dot on my phone and on my laptop at once: both went to zero together.',
  'Redis keeps what MySQL can rebuild. Sleeping better already.',
  'A feed is a merge of sorted lists, with opinions.',
  'Today I learned: 500 characters is plenty.',
  'Wrote the example document for GraphiQL. Sign up, follow, read.',
  'The celebrity path merges at read time. Nobody waits for a million writes.',
];

test('the app: live red dot and new-posts bar, and a feed that scrolls to its end', async () => {
  const a = await newContext();
  const b = await newContext();
  try {
    const pageA = await a.context.newPage();
    const pageB = await b.context.newPage();

    // A wrong password is said in words, then both sign up in the app.
    assertSecurityHeaders(await pageB.goto(APP_URL), 'the app');
    await pageB.getByLabel('Username').fill('nobody_here');
    await pageB.getByLabel('Password').fill('not-the-password');
    await pageB.getByRole('button', { name: 'Log in' }).click();
    await pageB.getByRole('alert').filter({ hasText: 'Wrong username or password.' }).waitFor();

    const tokenA = await signUpInApp(pageA, 'lovelace', 'Ada Lovelace');
    const tokenB = await signUpInApp(pageB, 'hopper', 'Grace Hopper');
    assert.ok(tokenA && tokenB, 'the app keeps no token after signing up');

    // A has 30 posts already, so that B's feed takes several pages; C,
    // whom B also follows, reposts one of them.
    const posts = [];
    for (let i = 0; i < 30; i++) {
      posts.push(await apiPost(tokenA, `${bodies[i % bodies.length]} (#${i + 1})`));
    }
    const c = await apiSignUp('torvalds', 'Linus');
    await api('mutation($id: ID!) { repost(postId: $id) { post { id } } }', { id: posts[27].id }, c.token);

    // B follows A on A's profile page, and C through the API.
    await pageB.goto(new URL('/app/u/lovelace', SERVER).toString());
    await pageB.getByRole('heading', { name: 'Ada Lovelace' }).waitFor();
    await pageB.getByRole('button', { name: 'Follow', exact: true }).click();
    await pageB.getByRole('button', { name: 'Unfollow' }).waitFor();
    await pageB.getByTestId('follower-count').filter({ hasText: '1' }).waitFor();
    await api('mutation($id: ID!) { follow(userId: $id) { viewer { id } } }', { id: c.id }, tokenB);

    // B's home feed: A's posts, newest first; opening it marks it read.
    await pageB.getByRole('link', { name: 'Home' }).click();
    await pageB.locator('[data-testid="feed-entry"]').first().waitFor();
    assert.equal(
      (await feedPostIds(pageB))[0], posts.at(-1).id,
      'the newest of A\'s posts is not at the top of B\'s feed',
    );
    await pageB.locator('header[data-live="live"]').waitFor();
    await pageB.getByTestId('unread-dot').waitFor({ state: 'detached' });
    // graphql-ws acknowledges the connection, not each subscription: a
    // moment's grace lets the server start feedItemAdded.
    await pageB.waitForTimeout(300);

    // A posts in the app.
    const fresh = 'Live from the browser: hello, Grace!';
    await pageA.getByLabel('New post').fill(fresh);
    await pageA.getByRole('button', { name: 'Post', exact: true }).click();
    await pageA.getByRole('status').filter({ hasText: 'Posted.' }).waitFor();

    // B, without a reload: the red dot rises and the bar appears.
    await pageB.getByTestId('unread-dot').filter({ hasText: /^1$/ }).waitFor();
    const bar = pageB.getByTestId('new-posts');
    await bar.filter({ hasText: /^1 new post$/ }).waitFor();
    assert.equal(await pageB.getByText(fresh).count(), 0, 'A\'s new post showed before B asked for it');
    await pageB.mouse.move(0, 0);
    await screenshot(pageB, 'feed.png');

    // Clicking the bar shows A's post at the top, and the dot clears.
    await bar.click();
    await pageB.locator('[data-testid="feed-entry"]').first().filter({ hasText: fresh }).waitFor();
    await bar.waitFor({ state: 'detached' });
    await pageB.getByTestId('unread-dot').waitFor({ state: 'detached' });

    // The reposted post is one entry, with who reposted it.
    const reposted = pageB.locator(`[data-testid="feed-entry"][data-post-id="${posts[27].id}"]`);
    await reposted.filter({ hasText: 'reposted by Linus' }).waitFor();

    // B scrolls to the end of the feed: every entry once, newest first.
    const end = pageB.getByTestId('list-end');
    for (let i = 0; i < 20 && !(await end.isVisible()); i++) {
      await pageB.mouse.wheel(0, 4000);
      await pageB.waitForTimeout(150);
    }
    await end.waitFor();
    const ids = await feedPostIds(pageB);
    const newest = (await api('query { feed(first: 1) { edges { node { post { id body } } } } }', {}, tokenB))
      .feed.edges[0].node.post;
    assert.equal(newest.body, fresh);
    const want = [newest.id, ...posts.map((p) => p.id).reverse()];
    assert.equal(new Set(ids).size, ids.length, `duplicate entries in the feed: ${ids}`);
    assert.deepEqual(ids, want, 'the feed, scrolled to its end, is not A\'s 31 posts newest first');

    // A's profile, as B sees it.
    await pageB.getByRole('link', { name: 'Ada Lovelace' }).first().click();
    await pageB.getByRole('heading', { name: 'Ada Lovelace' }).waitFor();
    await pageB.getByTestId('post-count').filter({ hasText: '31' }).waitFor();
    await pageB.locator('[data-testid="post"]').first().filter({ hasText: fresh }).waitFor();
    await pageB.mouse.move(0, 0);
    await screenshot(pageB, 'profile.png');

    // Followers and following lists.
    await pageB.getByRole('link', { name: /Followers/ }).click();
    await pageB.getByRole('region', { name: 'Followers' }).getByText('Grace Hopper').waitFor();
    await pageB.goto(new URL('/app/u/hopper/following', SERVER).toString());
    const following = pageB.getByRole('region', { name: 'Following' });
    await following.getByText('Ada Lovelace').waitFor();
    await following.getByText('Linus').waitFor();

    for (const ctx of [a, b]) {
      assert.deepEqual(ctx.blocked, [], 'the app asked for something from another host');
      assert.deepEqual(ctx.errors, [], 'the app threw');
      assert.deepEqual(ctx.cspViolations, [], 'the app broke its Content-Security-Policy');
    }
  } catch (err) {
    for (const ctx of [a, b]) if (ctx.cspViolations.length) console.log('CSP violations:', ctx.cspViolations);
    await saveFailure([a, b]);
    throw err;
  } finally {
    await a.context.close();
    await b.context.close();
  }
});

// ---------------------------------------------------------------------------
// Page numbers on a long followers list

test('the app: a followers list longer than a page has page numbers that jump', async () => {
  await inNewContext('app', async (c) => {
    // 45 followers of one account, followed in turn: pages of 20 are
    // fan44..fan25, fan24..fan5, fan4..fan0.
    const star = await apiSignUp('turing', 'Alan Turing');
    const fans = [];
    for (let i = 0; i < 45; i++) {
      const fan = await apiSignUp(`fan${i}`, `Fan ${i}`);
      await api('mutation($id: ID!) { follow(userId: $id) { user { id } } }', { id: star.id }, fan.token);
      fans.push(fan);
    }
    const page = await c.context.newPage();
    await signUpInApp(page, 'reader', 'Page Reader');
    await page.goto(new URL('/app/u/turing/followers', SERVER).toString());
    const list = page.getByRole('region', { name: 'Followers' });
    await list.getByTestId('page-of').filter({ hasText: 'Page 1 of 3' }).waitFor();
    await list.getByText('Fan 44', { exact: true }).waitFor();

    // A jump to the last page: the oldest five, the request an offset.
    const jump = page.waitForResponse((r) =>
      new URL(r.url()).pathname === '/query' && r.request().postDataJSON()?.operationName === 'FollowersPage' &&
      r.request().postDataJSON()?.variables?.offset === 40);
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('button', { name: 'Page 3' }).click();
    await jump;
    await list.getByTestId('page-of').filter({ hasText: 'Page 3 of 3' }).waitFor();
    await list.getByText('Fan 0', { exact: true }).waitFor();
    const names = await list.locator('li').allInnerTexts();
    assert.equal(names.length, 5, `the last page shows ${names.length} followers`);
    assert.ok(new URL(page.url()).searchParams.get('page') === '3', `the address does not keep the page: ${page.url()}`);

    // Go to page 2 by its number, typed.
    await page.getByLabel('Go to page').fill('2');
    await page.getByRole('button', { name: 'Go', exact: true }).click();
    await list.getByTestId('page-of').filter({ hasText: 'Page 2 of 3' }).waitFor();
    await list.getByText('Fan 24', { exact: true }).waitFor();
    await list.getByText('Fan 5', { exact: true }).waitFor();
    await screenshot(page, 'followers-pages.png');
  });
});

// ---------------------------------------------------------------------------
// Home entries of other kinds

// api/browser_test.go promotes one post before the tests start, and its
// server puts an insertion in every second place of a home.
const PROMOTED_POST_ID = process.env.PROMOTED_POST_ID || '';
const PROMOTED_POST_BODY = process.env.PROMOTED_POST_BODY || '';

/** The kinds of a viewer's home entries, top to bottom, from the API. */
async function apiHomeKinds(token) {
  const data = await api(`query {
    home(first: 20) {
      edges { node { __typename ... on SuggestedUser { user { id } } ... on PromotedPost { post { id } } } }
    }
  }`, {}, token);
  return data.home.edges.map(({ node }) =>
    node.__typename === 'SuggestedUser' ? `S:${node.user.id}`
      : node.__typename === 'PromotedPost' ? `P:${node.post.id}` : 'F');
}

/** Polls the async pred until it holds. */
async function waitForAsync(pred, what, detail = () => null, timeoutMs = TIMEOUT_MS) {
  const until = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(await detail())}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('the app: a home with a suggested user to follow, a promoted post, and a dismissal', async () => {
  assert.ok(PROMOTED_POST_ID && PROMOTED_POST_BODY, 'PROMOTED_POST_ID and PROMOTED_POST_BODY are not set (api/browser_test.go promotes a post)');
  await inNewContext('app', async (c) => {
    // The viewer follows two accounts that both follow two others: those
    // two are suggested (SuggestMinFollowedBy is 2). One of the followees
    // has six posts, so that the home has slots for three insertions.
    const viewer = await apiSignUp('homer', 'Home Viewer');
    const x = await apiSignUp('knuth', 'Donald Knuth');
    const y = await apiSignUp('dijkstra', 'Edsger Dijkstra');
    const z = await apiSignUp('hamilton', 'Margaret Hamilton');
    const w = await apiSignUp('liskov', 'Barbara Liskov');
    for (const [who, whom] of [[viewer, x], [viewer, y], [x, z], [y, z], [x, w], [y, w]]) {
      await api('mutation($id: ID!) { follow(userId: $id) { user { id } } }', { id: whom.id }, who.token);
    }
    for (let i = 0; i < 6; i++) await apiPost(x.token, `${bodies[i]} (knuth #${i + 1})`);
    // Fan-out is asynchronous: wait until the viewer's home holds the six
    // posts and the three insertions, one in every second place.
    const want = ['F', 'I', 'F', 'I', 'F', 'I', 'F', 'F', 'F'];
    const shape = (kinds) => kinds.map((k) => (k === 'F' ? 'F' : 'I'));
    await waitForAsync(async () => JSON.stringify(shape(await apiHomeKinds(viewer.token))) === JSON.stringify(want),
      'the viewer\'s home through the API', () => apiHomeKinds(viewer.token));
    const inserted = (await apiHomeKinds(viewer.token)).filter((k) => k !== 'F').sort();
    assert.deepEqual(inserted, [`P:${PROMOTED_POST_ID}`, `S:${z.id}`, `S:${w.id}`].sort());

    // The app, signed in as the viewer (the token where the app keeps it).
    const page = await c.context.newPage();
    await page.goto(APP_URL);
    await page.evaluate((t) => localStorage.setItem('feedservice.token', t), viewer.token);
    await page.goto(APP_URL);
    const home = page.getByRole('region', { name: 'Home feed' });
    await home.locator('[data-testid="feed-entry"]').nth(5).waitFor();
    const kinds = await home.locator(':scope > [data-testid]').evaluateAll((els) =>
      els.map((el) => (el.dataset.testid === 'feed-entry' ? 'F' : 'I')));
    assert.deepEqual(kinds, want, 'the app does not show the home\'s entries in their places');

    // Each kind as it is drawn: the promoted post with its label, each
    // suggestion with a Follow button.
    const promoted = home.locator(`[data-testid="home-promoted"][data-post-id="${PROMOTED_POST_ID}"]`);
    await promoted.getByTestId('promoted-label').filter({ hasText: /^Promoted$/ }).waitFor();
    await promoted.getByText(PROMOTED_POST_BODY).waitFor();
    const suggestion = (u) => home.locator(`[data-testid="home-suggestion"][data-user-id="${u.id}"]`);
    for (const u of [z, w]) {
      await suggestion(u).getByRole('button', { name: 'Follow', exact: true }).waitFor();
      await suggestion(u).getByText('followed by 2 people you follow').waitFor();
    }
    // Opening the home marked the newest feed entry read (by its feed
    // cursor): the red dot is zero.
    await waitForAsync(async () => (await api('query { feed(first: 1) { unreadCount } }', {}, viewer.token)).feed.unreadCount === 0,
      'markFeedRead from the home page');
    await page.mouse.move(0, 0);
    await screenshot(page, 'home-kinds.png');

    // Following a suggestion: the viewer follows z, and the suggestion
    // goes (the home is fetched afresh) or shows that it is followed.
    await suggestion(z).getByRole('button', { name: 'Follow', exact: true }).click();
    await waitForAsync(async () => (await suggestion(z).count()) === 0 ||
      (await suggestion(z).getByRole('button', { name: 'Unfollow' }).count()) === 1, 'the followed suggestion to go or change');
    const followsZ = await api('query($u: String!) { user(username: $u) { viewerIsFollowing } }', { u: 'hamilton' }, viewer.token);
    assert.equal(followsZ.user.viewerIsFollowing, true, 'the Follow button of a suggestion did not follow');
    assert.ok(!(await apiHomeKinds(viewer.token)).includes(`S:${z.id}`), 'a followed account is still suggested');

    // Dismissing the other suggestion: it leaves at once, and stays away
    // after a reload; the promoted post stays.
    await suggestion(w).getByRole('button', { name: 'Dismiss the suggestion liskov' }).click();
    await suggestion(w).waitFor({ state: 'detached' });
    await page.reload();
    await home.locator('[data-testid="feed-entry"]').nth(5).waitFor();
    await promoted.getByTestId('promoted-label').waitFor();
    assert.equal(await suggestion(w).count(), 0, 'a dismissed suggestion came back after a reload');
    assert.ok(!(await apiHomeKinds(viewer.token)).includes(`S:${w.id}`), 'the server still suggests a dismissed account');
  });
});

// ---------------------------------------------------------------------------
// Mute and block

/** What the API says of the viewer's relations to username. */
const apiRelation = async (token, username) =>
  (await api('query($u: String!) { user(username: $u) { viewerIsFollowing viewerHasMuted viewerHasBlocked } }',
    { u: username }, token)).user;

test('the app: mute takes a followee\'s posts out of the feed and unmute brings them back; a block, undone from the blocked list', async () => {
  await inNewContext('app', async (c) => {
    // The viewer follows two people who have posted one post each.
    const viewer = await apiSignUp('quiet_reader', 'Quiet Reader');
    const loud = await apiSignUp('babbage', 'Charles Babbage');
    const calm = await apiSignUp('noether', 'Emmy Noether');
    for (const whom of [loud, calm]) {
      await api('mutation($id: ID!) { follow(userId: $id) { user { id } } }', { id: whom.id }, viewer.token);
    }
    const loudPost = await apiPost(loud.token, bodies[6]);
    const calmPost = await apiPost(calm.token, bodies[7]);
    const both = [calmPost.id, loudPost.id];
    // Fan-out is asynchronous: wait until the viewer's feed holds both.
    const apiFeedIds = async () =>
      (await api('query { feed(first: 10) { edges { node { post { id } } } } }', {}, viewer.token))
        .feed.edges.map((e) => e.node.post.id);
    await waitForAsync(async () => JSON.stringify(await apiFeedIds()) === JSON.stringify(both),
      'both posts in the viewer\'s feed', apiFeedIds);

    const page = await c.context.newPage();
    await page.goto(APP_URL);
    await page.evaluate((t) => localStorage.setItem('feedservice.token', t), viewer.token);
    await page.goto(APP_URL);
    const nav = page.getByRole('navigation', { name: 'Main' });
    const profile = page.getByRole('region', { name: 'Profile' });
    const button = (where, name) => where.getByRole('button', { name, exact: true });
    // The app's home, reached by its link (the app's own cache, no reload),
    // shows the feed entries want, top to bottom.
    const homeShows = async (want, what) => {
      await nav.getByRole('link', { name: 'Home' }).click();
      await waitForAsync(async () => JSON.stringify(await feedPostIds(page)) === JSON.stringify(want),
        `the home to show ${what}`, () => feedPostIds(page));
    };
    await homeShows(both, 'both posts');

    // Mute from the profile: the viewer still follows, the post leaves the feed.
    await page.getByRole('region', { name: 'Home feed' }).getByRole('link', { name: 'Charles Babbage' }).click();
    await button(profile, 'Mute').click();
    await button(profile, 'Unmute').waitFor();
    await profile.getByTestId('muted-notice').waitFor();
    assert.deepEqual(await apiRelation(viewer.token, 'babbage'),
      { viewerIsFollowing: true, viewerHasMuted: true, viewerHasBlocked: false });
    await homeShows([calmPost.id], 'the muted followee\'s post gone');

    // The muted list has them, since when; their name there leads back to
    // the profile, where Unmute brings the post back in its place.
    await nav.getByRole('link', { name: 'Muted & blocked' }).click();
    const muted = page.getByRole('region', { name: 'Muted accounts', exact: true });
    const mutedRow = muted.locator(`[data-testid="hidden-user"][data-user-id="${loud.id}"]`);
    await button(mutedRow, 'Unmute').waitFor();
    await mutedRow.getByText('muted just now').waitFor();
    await muted.getByTestId('hidden-count').filter({ hasText: /^1 muted account$/ }).waitFor();
    await mutedRow.getByRole('link', { name: 'Charles Babbage' }).click();
    await button(profile, 'Unmute').click();
    await button(profile, 'Mute').waitFor();
    assert.equal((await apiRelation(viewer.token, 'babbage')).viewerHasMuted, false, 'Unmute did not unmute');
    await homeShows(both, 'the unmuted followee\'s post back in its place');

    // Block from the profile, after the confirmation: the follow ends (the
    // Follow button goes, their follower count drops), and the post leaves
    // the feed.
    await page.getByRole('region', { name: 'Home feed' }).getByRole('link', { name: 'Charles Babbage' }).click();
    await profile.getByTestId('follower-count').filter({ hasText: /^1$/ }).waitFor();
    page.once('dialog', (dialog) => dialog.accept());
    await button(profile, 'Block').click();
    await button(profile, 'Unblock').waitFor();
    await profile.getByTestId('blocked-notice').waitFor();
    await profile.getByTestId('follower-count').filter({ hasText: /^0$/ }).waitFor();
    await page.getByText('Their posts are hidden while you block them.').waitFor();
    assert.equal(await button(profile, 'Follow').count() + await button(profile, 'Unfollow').count(), 0,
      'a blocked user\'s profile offers to follow them');
    assert.deepEqual(await apiRelation(viewer.token, 'babbage'),
      { viewerIsFollowing: false, viewerHasMuted: false, viewerHasBlocked: true });
    await homeShows([calmPost.id], 'the blocked user\'s post gone');

    // The blocked list has them; its Unblock undoes the block (the row
    // stays, to block again) and restores no follow.
    await nav.getByRole('link', { name: 'Muted & blocked' }).click();
    await page.getByRole('navigation', { name: 'Muted and blocked' }).getByRole('link', { name: 'Blocked' }).click();
    const blocked = page.getByRole('region', { name: 'Blocked accounts', exact: true });
    const blockedRow = blocked.locator(`[data-testid="hidden-user"][data-user-id="${loud.id}"]`);
    await blockedRow.getByText('blocked just now').waitFor();
    await screenshot(page, 'muted-blocked.png');
    await button(blockedRow, 'Unblock').click();
    await button(blockedRow, 'Block').waitFor();
    assert.deepEqual(await apiRelation(viewer.token, 'babbage'),
      { viewerIsFollowing: false, viewerHasMuted: false, viewerHasBlocked: false });
    await page.reload();
    await page.getByText('You block nobody.').waitFor();
    await homeShows([calmPost.id], 'the feed without the unfollowed user');
  });
});

// ---------------------------------------------------------------------------
// Protected accounts

/** What the API says of username as the holder of token sees them. */
const apiProtection = async (token, username) =>
  (await api('query($u: String!) { user(username: $u) { isProtected viewerIsFollowing viewerHasRequestedFollow followerCount timeline(first: 5) { edges { node { id } } } } }',
    { u: username }, token)).user;

test('the app: a protected account: the switch, a request made with its button, and the requests approved and rejected on the profile', async () => {
  await inNewContext('app', async (c) => {
    const owner = await apiSignUp('rfranklin', 'Rosalind Franklin');
    const fan = await apiSignUp('kovalevskaya', 'Sofia Kovalevskaya');
    const pest = await apiSignUp('nosy_parker', 'Nosy Parker');
    await apiPost(owner.token, bodies[8]);
    const button = (where, name) => where.getByRole('button', { name, exact: true });
    const openAs = async (page, token, path) => {
      await page.goto(APP_URL);
      await page.evaluate((t) => localStorage.setItem('feedservice.token', t), token);
      await page.goto(new URL(path, APP_URL).toString());
    };

    // The owner turns protection on from their own profile.
    const mine = await c.context.newPage();
    await openAs(mine, owner.token, 'u/rfranklin');
    const profile = mine.getByRole('region', { name: 'Profile' });
    await profile.getByLabel('Protect my account').click();
    await profile.getByTestId('protected-badge').waitFor();
    assert.equal((await apiProtection(owner.token, 'rfranklin')).isProtected, true, 'the switch did not protect the account');

    // A reader (signed in on the same browser: one token at a time) asks
    // with the profile's button: it says Requested, no follow is made, and
    // the timeline stays closed to them.
    await openAs(mine, fan.token, 'u/rfranklin');
    await mine.getByTestId('protected-notice').waitFor();
    await button(profile, 'Request to follow').click();
    await button(profile, 'Requested').waitFor();
    const asked = await apiProtection(fan.token, 'rfranklin');
    assert.equal(asked.viewerHasRequestedFollow, true, 'the button made no request');
    assert.equal(asked.viewerIsFollowing, false, 'a request made a follow');
    assert.equal(asked.timeline.edges.length, 0, 'a protected timeline showed to a reader who only asked');
    await api('mutation($id: ID!) { follow(userId: $id) { user { id } } }', { id: owner.id }, pest.token);

    // The owner's profile lists both requests, newest first; Approve makes
    // the follow (the follower count moves), Reject drops the other.
    await openAs(mine, owner.token, 'u/rfranklin');
    const requests = mine.getByRole('region', { name: 'Follow requests' });
    await requests.getByTestId('request-count').filter({ hasText: /^2 follow requests$/ }).waitFor();
    const row = (user) => requests.locator(`[data-testid="follow-request"][data-user-id="${user.id}"]`);
    await button(row(fan), 'Approve').click();
    await requests.getByTestId('request-count').filter({ hasText: /^1 follow request$/ }).waitFor();
    await button(row(pest), 'Reject').click();
    await requests.getByText('Nobody is waiting for your approval.').waitFor();
    const approved = await apiProtection(fan.token, 'rfranklin');
    assert.equal(approved.viewerIsFollowing, true, 'Approve made no follow');
    assert.equal(approved.timeline.edges.length, 1, 'the approved follower does not see the post');
    const rejected = await apiProtection(pest.token, 'rfranklin');
    assert.equal(rejected.viewerIsFollowing || rejected.viewerHasRequestedFollow, false, 'Reject left a follow or a request');
    await mine.reload();
    await profile.getByTestId('follower-count').filter({ hasText: /^1$/ }).waitFor();
    await openAs(mine, fan.token, 'u/rfranklin');
    await button(profile, 'Unfollow').waitFor();
  });
});

// ---------------------------------------------------------------------------
// Lists

test('the app: a list made, a followee added from their profile, its feed read, renamed, emptied and deleted', async () => {
  await inNewContext('app', async (c) => {
    const viewer = await apiSignUp('list_keeper', 'List Keeper');
    const inList = await apiSignUp('meitner', 'Lise Meitner');
    const outside = await apiSignUp('goodall', 'Jane Goodall');
    for (const whom of [inList, outside]) {
      await api('mutation($id: ID!) { follow(userId: $id) { user { id } } }', { id: whom.id }, viewer.token);
    }
    const listed = await apiPost(inList.token, bodies[2]);
    await apiPost(outside.token, bodies[3]);
    const page = await c.context.newPage();
    await page.goto(APP_URL);
    await page.evaluate((t) => localStorage.setItem('feedservice.token', t), viewer.token);
    await page.goto(APP_URL);
    const nav = page.getByRole('navigation', { name: 'Main' });
    const button = (where, name) => where.getByRole('button', { name, exact: true });

    // Made on the Lists page.
    await nav.getByRole('link', { name: 'Lists' }).click();
    await page.getByLabel('List name').fill('Physicists');
    await button(page, 'Create list').click();
    const lists = page.getByRole('region', { name: 'Your lists' });
    await lists.getByRole('link', { name: 'Physicists' }).waitFor();

    // A followee added from their profile, with the list's switch.
    await page.goto(new URL('u/meitner', APP_URL).toString());
    const switches = page.getByRole('group', { name: 'Lists' });
    await switches.getByLabel('Physicists').click();
    await switches.getByLabel('Physicists').and(page.locator(':checked')).waitFor();

    // The list holds them, and its feed their post alone.
    await nav.getByRole('link', { name: 'Lists' }).click();
    await lists.getByRole('link', { name: 'Physicists' }).click();
    const members = page.getByRole('region', { name: 'Members' });
    await members.getByTestId('member-count').filter({ hasText: /^1 member$/ }).waitFor();
    const entries = () => page.locator('[data-testid="list-entry"]').evaluateAll((els) => els.map((el) => el.dataset.postId));
    await waitForAsync(async () => JSON.stringify(await entries()) === JSON.stringify([listed.id]),
      'the list feed to show the member\'s post alone', entries);

    // Renamed, emptied, deleted.
    await page.getByLabel('New name').fill('Nuclear physicists');
    await button(page, 'Rename').click();
    await page.getByTestId('list-name').filter({ hasText: /^Nuclear physicists$/ }).waitFor();
    await button(members, 'Remove').click();
    await members.getByTestId('member-count').filter({ hasText: /^0 members$/ }).waitFor();
    await page.getByText('Nothing here yet.').waitFor();
    page.once('dialog', (dialog) => dialog.accept());
    await button(page, 'Delete list').click();
    await page.getByText('You have no lists yet.').waitFor();
    const left = await api('query { lists(first: 5) { totalCount } }', {}, viewer.token);
    assert.equal(left.lists.totalCount, 0, 'Delete list left the list');
  });
});

test('the app: a profile\'s list switches page through the lists and each list\'s members', async () => {
  await inNewContext('app', async (c) => {
    const viewer = await apiSignUp('many_lists', 'Many Lists');
    const curie = await apiSignUp('mcurie', 'Marie Curie');
    const others = [];
    for (let i = 0; i < 100; i++) others.push(await apiSignUp(`crowd${i}`, `Crowd ${i}`));
    for (const whom of [curie, ...others]) {
      await api('mutation($id: ID!) { follow(userId: $id) { user { id } } }', { id: whom.id }, viewer.token);
    }
    const made = async (name) =>
      (await api('mutation($n: String!) { createList(name: $n) { list { id } } }', { n: name }, viewer.token)).createList.list.id;
    const add = (list, whom) =>
      api('mutation($l: ID!, $u: ID!) { addToList(listId: $l, userId: $u) { list { id } } }', { l: list, u: whom.id }, viewer.token);
    // The oldest list, on the lists' second page of ten, holds Curie as its
    // oldest member, behind a first page of 100 newer ones.
    const oldest = await made('Laureates');
    await add(oldest, curie);
    for (const whom of others) await add(oldest, whom);
    for (let i = 1; i <= 10; i++) await made(`Newer ${i}`);

    const page = await c.context.newPage();
    await page.goto(APP_URL);
    await page.evaluate((t) => localStorage.setItem('feedservice.token', t), viewer.token);
    await page.goto(new URL('u/mcurie', APP_URL).toString());
    const switches = page.getByRole('group', { name: 'Lists' });
    await switches.getByLabel('Newer 10').waitFor();
    assert.equal(await switches.getByLabel('Laureates').count(), 0, 'the eleventh list shows before More lists');
    await switches.getByRole('button', { name: 'More lists', exact: true }).click();
    const laureates = switches.getByLabel('Laureates');
    await laureates.and(page.locator(':checked')).waitFor();
    assert.equal(await switches.getByLabel('Newer 1', { exact: true }).isChecked(), false, 'a list without Curie is on');

    // Off, then on again: the switch follows the list.
    await laureates.click();
    await laureates.and(page.locator(':not(:checked):enabled')).waitFor();
    const members = async () =>
      (await api('query($id: ID!) { node(id: $id) { ... on List { memberCount } } }', { id: oldest }, viewer.token)).node.memberCount;
    assert.equal(await members(), 100, 'the switch turned off left Curie in the list');
    await laureates.click();
    await laureates.and(page.locator(':checked:enabled')).waitFor();
    assert.equal(await members(), 101, 'the switch turned on did not add Curie');

    // The list's page shows its members 20 at a time, newest first (Curie,
    // added again), and More members reads on to the oldest (the first of
    // the crowd).
    await page.goto(new URL(`lists/${encodeURIComponent(oldest)}`, APP_URL).toString());
    const region = page.getByRole('region', { name: 'Members' });
    await region.getByTestId('member-count').filter({ hasText: /^101 members$/ }).waitFor();
    const shown = () => region.getByTestId('list-member').evaluateAll((els) => els.map((el) => el.dataset.userId));
    const moreMembers = region.getByRole('button', { name: 'More members', exact: true });
    for (const want of [20, 40, 60, 80, 100, 101]) {
      await waitForAsync(async () => (await shown()).length === want, `${want} members on the list's page`, shown);
      if (want < 101) await moreMembers.click();
    }
    const ids = await shown();
    assert.equal(ids[0], curie.id, 'the newest member is not first');
    assert.equal(ids[100], others[0].id, 'the oldest member is not last');
    assert.equal(new Set(ids).size, 101, 'a member shows twice');
    assert.equal(await moreMembers.count(), 0, 'More members shows past the last member');
  });
});

// ---------------------------------------------------------------------------
// CORS

// CORS_ORIGIN serves a blank page on an origin the server lists in
// ALLOWED_ORIGINS, CORS_DENIED_ORIGIN one on an origin it does not
// (api/browser_test.go starts both and sets the list).
const CORS_ORIGIN = process.env.CORS_ORIGIN || '';
const CORS_DENIED = process.env.CORS_DENIED_ORIGIN || '';

/** Opens origin's blank page, from which the test fetches /query. */
async function pageOn(context, origin, consoleLines) {
  const page = await context.newPage();
  page.on('console', (msg) => consoleLines.push(msg.text()));
  await page.goto(`${origin}/`);
  return page;
}

/** What a page's cross-origin POST of a query with a bearer token gets. */
async function fetchViewer(page, token) {
  return page.evaluate(async ({ url, token }) => {
    try {
      const res = await fetch(url, {
        method: 'POST',
        credentials: 'include',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
        body: JSON.stringify({ query: '{ viewer { username } }' }),
      });
      return { status: res.status, body: await res.json(), requestId: res.headers.get('X-Request-ID') };
    } catch (e) {
      return { error: String(e) };
    }
  }, { url: new URL('/query', SERVER).toString(), token });
}

test('a page on a listed origin calls /query across origins; another origin is refused', async () => {
  assert.ok(CORS_ORIGIN && CORS_DENIED, 'CORS_ORIGIN and CORS_DENIED_ORIGIN are not set (pages on an origin the server lists in ALLOWED_ORIGINS and on one it does not)');
  const consoleLines = [];
  const user = await apiSignUp('cors_page', 'CORS page');
  const context = await browser.newContext();
  context.setDefaultTimeout(TIMEOUT_MS);
  try {
    // The preflight (JSON body and Authorization make one) is answered,
    // with credentials, and the answer and its request id are readable.
    const allowed = await fetchViewer(await pageOn(context, CORS_ORIGIN, consoleLines), user.token);
    assert.equal(allowed.error, undefined, `fetch from ${CORS_ORIGIN}: ${allowed.error}; console: ${consoleLines.join(' | ')}`);
    assert.equal(allowed.status, 200);
    assert.deepEqual(allowed.body, { data: { viewer: { username: 'cors_page' } } });
    assert.match(allowed.requestId ?? '', /^[0-9a-f]{16}$/, 'X-Request-ID exposed to the page');
    // The browser itself refuses what the server does not allow.
    const denied = await fetchViewer(await pageOn(context, CORS_DENIED, consoleLines), user.token);
    assert.match(denied.error ?? '', /TypeError: Failed to fetch/, `fetch from ${CORS_DENIED}: ${JSON.stringify(denied)}`);
  } finally {
    await context.close();
  }
});
