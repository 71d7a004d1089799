import { NavLink, Route, Routes, useParams, useSearchParams } from 'react-router';
import { useQuery } from '@apollo/client/react';

import { BlockButton } from '../components/BlockButton';
import { ErrorNote } from '../components/ErrorNote';
import { FollowButton } from '../components/FollowButton';
import { FollowRequests } from '../components/FollowRequests';
import { ListSwitches } from '../components/ListSwitches';
import { LoadMore } from '../components/LoadMore';
import { MuteButton } from '../components/MuteButton';
import { PageNumbers } from '../components/PageNumbers';
import { PostCard } from '../components/PostCard';
import { ProtectedSwitch } from '../components/ProtectedSwitch';
import { Time } from '../components/Time';
import { UserLink } from '../components/UserLink';
import { FOLLOWERS, FOLLOWERS_PAGE, FOLLOWING, FOLLOWING_PAGE, PROFILE, TIMELINE, type UserEdge } from '../graphql';
import { usePager } from '../pager';
import { useViewer } from '../viewer';

const PAGE_SIZE = 20;

/**
 * A user's page: who they are, their counts, and their timeline, followers
 * and following; for another user, buttons to follow, mute and block them;
 * for the viewer, the protection switch and the follow requests.
 */
export function Profile() {
  const { username = '' } = useParams();
  const viewer = useViewer();
  const { data, loading, error, refetch } = useQuery(PROFILE, {
    variables: { username },
    // Counts change while one looks elsewhere: show the cached ones at once,
    // and the fresh ones when they come.
    fetchPolicy: 'cache-and-network',
  });
  const user = data?.user;

  if (error) return <main className="page"><ErrorNote error={error} onRetry={() => refetch().catch(() => {})} /></main>;
  if (loading && !data) return <main className="page"><p className="muted">Loading…</p></main>;
  if (!user) {
    return (
      <main className="page">
        <p className="card">There is no user called “{username}”.</p>
      </main>
    );
  }

  const isViewer = viewer?.id === user.id;
  const base = `/u/${user.username}`;
  return (
    <main className="page">
      <section className="card profile" aria-label="Profile">
        <div className="profile-head">
          <div>
            <h1>{user.displayName}</h1>
            <p className="muted">
              @{user.username}
              {user.isProtected && <span className="badge" data-testid="protected-badge">Protected</span>}
              {user.followsViewer && <span className="badge">Follows you</span>}
            </p>
          </div>
          {viewer && !isViewer && (
            <div className="profile-actions">
              {/* A follow across a block is refused: unblock first. */}
              {!user.viewerHasBlocked && <FollowButton user={user} />}
              <div className="profile-actions-more">
                <MuteButton user={user} />
                <BlockButton user={user} />
              </div>
            </div>
          )}
        </div>
        {user.viewerHasBlocked && (
          <p className="notice" data-testid="blocked-notice">
            You block @{user.username}: neither of you sees the other's posts, and neither can follow the other.
          </p>
        )}
        {user.viewerHasMuted && !user.viewerHasBlocked && (
          <p className="notice" data-testid="muted-notice">
            You mute @{user.username}: their posts and reposts stay out of your feed.
          </p>
        )}
        {user.bio && <p>{user.bio}</p>}
        {isViewer && <ProtectedSwitch user={user} />}
        {viewer && !isViewer && user.viewerIsFollowing && <ListSwitches userId={user.id} />}
        <nav className="tabs" aria-label="Profile sections">
          <NavLink to={base} end><strong data-testid="post-count">{user.postCount}</strong> Posts</NavLink>
          <NavLink to={`${base}/followers`}><strong data-testid="follower-count">{user.followerCount}</strong> Followers</NavLink>
          <NavLink to={`${base}/following`}><strong data-testid="following-count">{user.followingCount}</strong> Following</NavLink>
        </nav>
      </section>
      {isViewer && <FollowRequests />}
      <Routes>
        <Route index element={<Timeline username={user.username} blocked={user.viewerHasBlocked}
          closed={user.isProtected && !isViewer && !user.viewerIsFollowing} />} />
        <Route path="followers" element={<Relations username={user.username} list="followers" total={user.followerCount} />} />
        <Route path="following" element={<Relations username={user.username} list="following" total={user.followingCount} />} />
      </Routes>
    </main>
  );
}

/**
 * The user's own posts and reposts, newest first (none across a block, and
 * none of a protected user's to whom does not follow them).
 */
function Timeline({ username, blocked, closed }: { username: string; blocked: boolean; closed: boolean }) {
  const { data, error, fetchMore, refetch } = useQuery(TIMELINE, {
    variables: { username, first: PAGE_SIZE },
    fetchPolicy: 'cache-and-network',
  });
  const conn = data?.user?.timeline;
  const more = usePager(conn?.pageInfo, (after) => fetchMore({ variables: { after } }));

  if (error) return <ErrorNote error={error} onRetry={() => refetch().catch(() => {})} />;
  if (!conn) return <p className="muted">Loading…</p>;
  if (conn.edges.length === 0) {
    if (closed && !blocked) {
      return (
        <p className="card muted" data-testid="protected-notice">
          This account is protected: its posts are for its approved followers.
        </p>
      );
    }
    return <p className="card muted">{blocked ? 'Their posts are hidden while you block them.' : 'No posts yet.'}</p>;
  }
  return (
    <section aria-label="Timeline" className="feed">
      {conn.edges.map(({ cursor, node }) => <PostCard key={cursor} post={node} />)}
      <LoadMore {...more} end="That's every post." />
    </section>
  );
}

/**
 * Who follows the user, or whom the user follows, most recent first: a
 * list that scrolls, or, past NUMBERED_FROM pages, numbered pages that
 * jump (the page is in the address, ?page=N).
 */
function Relations({ username, list, total }: { username: string; list: 'followers' | 'following'; total: number }) {
  if (total > NUMBERED_FROM * PAGE_SIZE) return <NumberedRelations username={username} list={list} />;
  return <ScrolledRelations username={username} list={list} />;
}

/** Lists longer than this many pages get page numbers. */
const NUMBERED_FROM = 1;

function ScrolledRelations({ username, list }: { username: string; list: 'followers' | 'following' }) {
  const { data, error, fetchMore, refetch } = useQuery(list === 'followers' ? FOLLOWERS : FOLLOWING, {
    variables: { username, first: PAGE_SIZE },
    fetchPolicy: 'cache-and-network',
  });
  const conn = listOf(data?.user);
  const more = usePager(conn?.pageInfo, (after) => fetchMore({ variables: { after } }));

  if (error) return <ErrorNote error={error} onRetry={() => refetch().catch(() => {})} />;
  if (!conn) return <p className="muted">Loading…</p>;
  if (conn.edges.length === 0) {
    return <p className="card muted">{list === 'followers' ? 'No followers yet.' : 'Not following anyone yet.'}</p>;
  }
  return (
    <section aria-label={list === 'followers' ? 'Followers' : 'Following'} className="card user-list">
      <RelationItems edges={conn.edges} />
      <LoadMore {...more} end="That's everyone." />
    </section>
  );
}

/** One numbered page of a long list, read by a page jump (offset). */
function NumberedRelations({ username, list }: { username: string; list: 'followers' | 'following' }) {
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number.parseInt(params.get('page') ?? '1', 10) || 1);
  const { data, previousData, error, refetch } = useQuery(list === 'followers' ? FOLLOWERS_PAGE : FOLLOWING_PAGE, {
    variables: { username, first: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE },
    fetchPolicy: 'cache-and-network',
  });
  // The page before stays in view while the next one loads.
  const conn = listOf((data ?? previousData)?.user);

  if (error) return <ErrorNote error={error} onRetry={() => refetch().catch(() => {})} />;
  if (!conn) return <p className="muted">Loading…</p>;
  const pages = Math.max(1, Math.ceil(conn.totalCount / PAGE_SIZE));
  const go = (n: number) => setParams(n === 1 ? {} : { page: String(n) });
  return (
    <section aria-label={list === 'followers' ? 'Followers' : 'Following'} className="card user-list">
      <p className="muted small" data-testid="page-of">Page {page} of {pages}</p>
      {conn.edges.length === 0 ? <p className="muted">Nobody on this page: the list is shorter now.</p> : <RelationItems edges={conn.edges} />}
      <PageNumbers page={page} pages={pages} onGo={go} />
    </section>
  );
}

function RelationItems({ edges }: { edges: UserEdge[] }) {
  const viewer = useViewer();
  return (
    <ul>
      {edges.map(({ cursor, followedAt, node }) => (
        <li key={cursor}>
          <div>
            <UserLink user={node} full />
            {node.followsViewer && <span className="badge">Follows you</span>}
            <div className="muted small">followed <Time iso={followedAt} /></div>
          </div>
          {viewer && viewer.id !== node.id && <FollowButton user={node} />}
        </li>
      ))}
    </ul>
  );
}

/** The list that a followers or following query answered. */
function listOf<T>(user: { followers: T } | { following: T } | null | undefined): T | undefined {
  if (!user) return undefined;
  return 'followers' in user ? user.followers : user.following;
}
