import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { useMutation } from '@apollo/client/react';

import { CREATE_POST } from '../graphql';
import { ErrorNote } from './ErrorNote';

const MAX_CHARS = 500; // the API's MaxPostChars

/** A box to write a post in. */
export function Composer() {
  const [body, setBody] = useState('');
  const [posted, setPosted] = useState<string | null>(null);
  const [createPost, { loading, error, reset }] = useMutation(CREATE_POST, {
    update(cache, { data }) {
      // The author's own timeline and count change: drop them, and the
      // profile page fetches them afresh.
      const author = data?.createPost.post.author;
      if (!author) return;
      const id = cache.identify({ __typename: 'User', id: author.id });
      cache.evict({ id, fieldName: 'timeline' });
      cache.evict({ id, fieldName: 'postCount' });
    },
  });
  const length = [...body.trim()].length;

  async function submit(e: FormEvent) {
    e.preventDefault();
    const { data } = await createPost({ variables: { body } }).catch(() => ({ data: undefined }));
    if (data) {
      setBody('');
      setPosted(data.createPost.post.author.username);
    }
  }

  return (
    <form className="composer card" onSubmit={submit}>
      <label htmlFor="composer-body" className="visually-hidden">New post</label>
      <textarea
        id="composer-body"
        placeholder="What's happening?"
        value={body}
        rows={3}
        onChange={(e) => {
          setBody(e.target.value);
          setPosted(null);
          reset();
        }}
      />
      <div className="composer-foot">
        <span className={length > MAX_CHARS ? 'error-text' : 'muted'}>{length}/{MAX_CHARS}</span>
        {posted && (
          <span className="muted" role="status">
            Posted. Your followers will see it; it is on <Link to={`/u/${posted}`}>your profile</Link>.
          </span>
        )}
        <button type="submit" disabled={loading || length === 0}>
          {loading ? 'Posting…' : 'Post'}
        </button>
      </div>
      <ErrorNote error={error} />
    </form>
  );
}
