import { NavLink, Navigate, Route, Routes } from 'react-router';
import { useQuery } from '@apollo/client/react';

import { BlockButton } from '../components/BlockButton';
import { ErrorNote } from '../components/ErrorNote';
import { LoadMore } from '../components/LoadMore';
import { MuteButton } from '../components/MuteButton';
import { Time } from '../components/Time';
import { UserLink } from '../components/UserLink';
import { BLOCKED_USERS, MUTED_USERS, type RelatedUserEdge } from '../graphql';
import { usePager } from '../pager';

const PAGE_SIZE = 20;

type List = 'muted' | 'blocked';

/**
 * The people the viewer hides from their feed: the accounts they mute and
 * the accounts they block, most recent first, each with a button that
 * undoes it (and, once undone, redoes it: the row stays until the list is
 * next opened).
 */
export function Hidden() {
  return (
    <main className="page">
      <section className="card hidden-head" aria-label="Muted and blocked accounts">
        <h1>Muted and blocked</h1>
        <p className="muted small">
          Muted accounts stay followed, and their posts stay out of your feed. Blocked accounts and you do
          not follow or see each other.
        </p>
        <nav className="tabs" aria-label="Muted and blocked">
          <NavLink to="/hidden/muted">Muted</NavLink>
          <NavLink to="/hidden/blocked">Blocked</NavLink>
        </nav>
      </section>
      {/* Keyed: a switch of tabs starts the other list afresh, pager and all. */}
      <Routes>
        <Route index element={<Navigate to="muted" replace />} />
        <Route path="muted" element={<HiddenList key="muted" list="muted" />} />
        <Route path="blocked" element={<HiddenList key="blocked" list="blocked" />} />
      </Routes>
    </main>
  );
}

function HiddenList({ list }: { list: List }) {
  // Fetched on every visit: a mute or block made on a profile page adds a
  // row that the cached list lacks.
  const { data, error, fetchMore, refetch } = useQuery(list === 'muted' ? MUTED_USERS : BLOCKED_USERS, {
    variables: { first: PAGE_SIZE },
    fetchPolicy: 'cache-and-network',
  });
  const conn = listOf(data);
  const more = usePager(conn?.pageInfo, (after) => fetchMore({ variables: { after } }));
  const label = list === 'muted' ? 'Muted accounts' : 'Blocked accounts';

  if (error) return <ErrorNote error={error} onRetry={() => refetch().catch(() => {})} />;
  if (!conn) return <p className="muted">Loading…</p>;
  if (conn.edges.length === 0) {
    return <p className="card muted">{list === 'muted' ? 'You mute nobody.' : 'You block nobody.'}</p>;
  }
  return (
    <section aria-label={label} className="card user-list">
      <p className="muted small" data-testid="hidden-count">
        {conn.totalCount} {list} account{conn.totalCount === 1 ? '' : 's'}
      </p>
      <ul>
        {conn.edges.map((edge) => <HiddenRow key={edge.cursor} list={list} edge={edge} />)}
      </ul>
      <LoadMore {...more} end="That's everyone." />
    </section>
  );
}

function HiddenRow({ list, edge: { node, since } }: { list: List; edge: RelatedUserEdge }) {
  return (
    <li data-testid="hidden-user" data-user-id={node.id}>
      <div>
        <UserLink user={node} full />
        <div className="muted small">{list} <Time iso={since} /></div>
      </div>
      {list === 'muted' ? <MuteButton user={node} /> : <BlockButton user={node} />}
    </li>
  );
}

/** The list that a muted or blocked query answered. */
function listOf<T>(data: { mutedUsers: T } | { blockedUsers: T } | undefined): T | undefined {
  if (!data) return undefined;
  return 'mutedUsers' in data ? data.mutedUsers : data.blockedUsers;
}
