import { useState, type ReactNode } from 'react';
import { useMutation } from '@apollo/client/react';

import { useViewer } from '../viewer';
import { DELETE_POST, REPOST, type Post } from '../graphql';
import { ErrorNote } from './ErrorNote';
import { Time } from './Time';
import { UserLink } from './UserLink';

interface Props {
  post: Post;
  /** A line above the post, e.g. who reposted it. */
  context?: ReactNode;
  /** When the post reached this list, if that is not when it was written. */
  at?: string;
  /** False for a promoted post: its label stands where the time would. */
  showTime?: boolean;
}

/**
 * One post. A plain repost (an empty body) is shown as the post it
 * reposts, with "reposted by" above it.
 */
export function PostCard({ post, context, at, showTime = true }: Props) {
  const viewer = useViewer();
  const shown = post.repostOf && post.body === '' ? post.repostOf : post;
  const repostedBy = shown !== post ? post.author : null;
  const [repost, reposting] = useMutation(REPOST);
  const [remove, removing] = useMutation(DELETE_POST, {
    update(cache, { data }) {
      if (!data) return;
      cache.evict({ id: cache.identify({ __typename: 'Post', id: data.deletePost.deletedPostId }) });
      cache.evict({ id: cache.identify({ __typename: 'User', id: post.author.id }), fieldName: 'postCount' });
      cache.gc();
    },
  });
  const [reposted, setReposted] = useState(false);

  const mine = viewer?.id === post.author.id;
  return (
    <article className="post" data-testid="post" data-post-id={shown.id}>
      {(context || repostedBy) && (
        <p className="post-context muted">
          {context ?? (<>↻ reposted by <UserLink user={repostedBy!} /></>)}
        </p>
      )}
      <header>
        <UserLink user={shown.author} full />
        {showTime && <> · <Time iso={at ?? shown.createdAt} /></>}
      </header>
      {shown.body ? <p className="post-body">{shown.body}</p> : <p className="muted">(this post was deleted)</p>}
      <footer className="post-actions">
        {viewer && shown.author.id !== viewer.id && (
          <button
            type="button"
            className="link"
            disabled={reposting.loading || reposted}
            onClick={() => repost({ variables: { postId: shown.id } }).then(() => setReposted(true), () => {})}
          >
            {reposted ? '↻ Reposted' : '↻ Repost'}
          </button>
        )}
        <span className="muted">{shown.repostCount > 0 && `${shown.repostCount} repost${shown.repostCount === 1 ? '' : 's'}`}</span>
        {mine && (
          <button
            type="button"
            className="link danger"
            disabled={removing.loading}
            onClick={() => {
              if (window.confirm(repostedBy ? 'Undo this repost?' : 'Delete this post?')) remove({ variables: { id: post.id } }).catch(() => {});
            }}
          >
            {repostedBy ? 'Undo repost' : 'Delete'}
          </button>
        )}
      </footer>
      <ErrorNote error={reposting.error ?? removing.error} />
    </article>
  );
}
