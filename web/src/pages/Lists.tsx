import { useState, type FormEvent } from 'react';
import { Link, Route, Routes, useNavigate, useParams } from 'react-router';
import { useMutation, useQuery } from '@apollo/client/react';

import { ErrorNote } from '../components/ErrorNote';
import { LoadMore } from '../components/LoadMore';
import { PostCard } from '../components/PostCard';
import { Time } from '../components/Time';
import { UserLink } from '../components/UserLink';
import { CREATE_LIST, DELETE_LIST, LIST, LIST_MEMBER_PAGE, LISTS, REMOVE_FROM_LIST, RENAME_LIST } from '../graphql';
import { usePager } from '../pager';

const PAGE_SIZE = 10;

/** The viewer's lists, and one list's feed and members. Lists are private. */
export function Lists() {
  return (
    <Routes>
      <Route index element={<AllLists />} />
      <Route path=":id" element={<OneList />} />
    </Routes>
  );
}

/** Every list of the viewer's, newest first, and a form to make one. */
function AllLists() {
  const { data, error, refetch, fetchMore } = useQuery(LISTS, { fetchPolicy: 'cache-and-network' });
  const more = usePager(data?.lists.pageInfo, (after) => fetchMore({ variables: { after } }));
  const [name, setName] = useState('');
  const [create, creating] = useMutation(CREATE_LIST, { refetchQueries: ['Lists'] });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create({ variables: { name } }).then(() => setName('')).catch(() => {});
  };
  return (
    <main className="page">
      <section className="card" aria-label="Lists">
        <h1>Lists</h1>
        <p className="muted small">
          A list is a feed of some of the people you follow. Only you see your lists. Add someone from their profile.
        </p>
        <form onSubmit={submit} className="list-form">
          <label>
            List name <input value={name} maxLength={100} onChange={(e) => setName(e.target.value)} />
          </label>
          <button type="submit" disabled={creating.loading || name.trim() === ''}>Create list</button>
        </form>
        <ErrorNote error={creating.error} />
      </section>
      {error && <ErrorNote error={error} onRetry={() => refetch().catch(() => {})} />}
      {data && (data.lists.edges.length === 0 ? (
        <p className="card muted">You have no lists yet.</p>
      ) : (
        <section className="card user-list" aria-label="Your lists">
          <ul>
            {data.lists.edges.map(({ cursor, node }) => (
              <li key={cursor} data-testid="list-row" data-list-id={node.id}>
                <div>
                  <Link to={`/lists/${encodeURIComponent(node.id)}`}><strong>{node.name}</strong></Link>
                  <div className="muted small">
                    {node.memberCount === 1 ? '1 member' : `${node.memberCount} members`} · made <Time iso={node.createdAt} />
                  </div>
                </div>
              </li>
            ))}
          </ul>
          <LoadMore {...more} end="That's every list." />
        </section>
      ))}
    </main>
  );
}

/** One list: its name (to rename), its members (to remove), its feed, and Delete. */
function OneList() {
  const { id = '' } = useParams();
  const navigate = useNavigate();
  const { data, error, fetchMore, refetch } = useQuery(LIST, {
    variables: { id, first: PAGE_SIZE },
    fetchPolicy: 'cache-and-network',
  });
  const list = data?.node && 'feed' in data.node ? data.node : null;
  const more = usePager(list?.feed.pageInfo, (after) => fetchMore({ variables: { after } }));
  const moreMembers = usePager(list?.members.pageInfo, (after) => fetchMore({ query: LIST_MEMBER_PAGE, variables: { id, after } }));
  const [name, setName] = useState<string | null>(null);
  const [rename, renaming] = useMutation(RENAME_LIST);
  const [remove, removing] = useMutation(REMOVE_FROM_LIST, { refetchQueries: ['List', 'Lists'] });
  const [drop, dropping] = useMutation(DELETE_LIST, {
    refetchQueries: ['Lists'],
    onCompleted: () => navigate('/lists'),
  });

  if (error) return <main className="page"><ErrorNote error={error} onRetry={() => refetch().catch(() => {})} /></main>;
  if (!data) return <main className="page"><p className="muted">Loading…</p></main>;
  if (!list) return <main className="page"><p className="card">There is no such list. <Link to="/lists">Your lists</Link>.</p></main>;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (name !== null) rename({ variables: { listId: list.id, name } }).then(() => setName(null)).catch(() => {});
  };
  return (
    <main className="page">
      <section className="card" aria-label="List">
        <h1 data-testid="list-name">{list.name}</h1>
        <form onSubmit={submit} className="list-form">
          <label>
            New name <input value={name ?? list.name} maxLength={100} onChange={(e) => setName(e.target.value)} />
          </label>
          <button type="submit" className="secondary" disabled={renaming.loading || name === null}>Rename</button>
          <button type="button" className="secondary danger" disabled={dropping.loading}
            onClick={() => { if (window.confirm(`Delete the list “${list.name}”?`)) drop({ variables: { listId: list.id } }).catch(() => {}); }}>
            Delete list
          </button>
        </form>
        <ErrorNote error={renaming.error ?? dropping.error ?? removing.error} />
      </section>
      <section className="card user-list" aria-label="Members">
        <p className="muted small" data-testid="member-count">
          {list.memberCount === 1 ? '1 member' : `${list.memberCount} members`}
        </p>
        <ul>
          {list.members.edges.map(({ cursor, since, node }) => (
            <li key={cursor} data-testid="list-member" data-user-id={node.id}>
              <div>
                <UserLink user={node} full />
                <div className="muted small">added <Time iso={since} /></div>
              </div>
              <button type="button" className="secondary" disabled={removing.loading}
                onClick={() => remove({ variables: { listId: list.id, userId: node.id } }).catch(() => {})}>
                Remove
              </button>
            </li>
          ))}
        </ul>
        {moreMembers.hasMore && (
          <button type="button" className="secondary" disabled={moreMembers.loading} onClick={moreMembers.onLoad}>
            More members
          </button>
        )}
        <ErrorNote error={moreMembers.error} />
      </section>
      <section aria-label="List feed" className="feed">
        {list.feed.edges.length === 0 && <p className="card muted">Nothing here yet.</p>}
        {list.feed.edges.map(({ cursor, node }) => (
          <div key={cursor} data-testid="list-entry" data-post-id={node.post.id}>
            <PostCard post={node.post} />
          </div>
        ))}
        {list.feed.edges.length > 0 && <LoadMore {...more} end="That's the whole list." />}
      </section>
    </main>
  );
}
