import { Link } from 'react-router';

import type { UserSummary } from '../graphql';

export function UserLink({ user, full = false }: { user: UserSummary; full?: boolean }) {
  return (
    <Link to={`/u/${user.username}`} className="user-link">
      {full ? (
        <>
          <strong>{user.displayName}</strong> <span className="muted">@{user.username}</span>
        </>
      ) : (
        user.displayName
      )}
    </Link>
  );
}
