import { useEffect } from 'react';
import { Link, NavLink, Route, Routes, useLocation } from 'react-router';

import { useAuth } from './auth';
import { describeError } from './errors';
import { badgeText, LiveFeedProvider, useLiveFeed } from './live';
import { Hidden } from './pages/Hidden';
import { Home } from './pages/Home';
import { Lists } from './pages/Lists';
import { Profile } from './pages/Profile';
import { SignIn } from './pages/SignIn';
import { useViewer } from './viewer';

export function App() {
  const { token } = useAuth();
  const { pathname } = useLocation();
  // A new page opens at its top.
  useEffect(() => {
    window.scrollTo(0, 0);
  }, [pathname]);

  if (!token) return <SignIn />;
  return (
    <LiveFeedProvider>
      <Header />
      <Routes>
        <Route index element={<Home />} />
        <Route path="u/:username/*" element={<Profile />} />
        <Route path="hidden/*" element={<Hidden />} />
        <Route path="lists/*" element={<Lists />} />
        <Route path="*" element={<main className="page"><p className="card">This page does not exist. <Link to="/">Go home</Link>.</p></main>} />
      </Routes>
    </LiveFeedProvider>
  );
}

function Header() {
  const { signOut } = useAuth();
  const viewer = useViewer();
  const live = useLiveFeed();
  const unread = live.unread;
  return (
    <header className="top" data-live={unread === null ? 'connecting' : 'live'}>
      <nav aria-label="Main">
        <Link to="/" className="brand">Feed</Link>
        <NavLink to="/" end>
          Home
          {unread !== null && unread.count > 0 && (
            <span className="dot" data-testid="unread-dot" aria-label={`${badgeText(unread)} unread`}>
              {badgeText(unread)}
            </span>
          )}
        </NavLink>
        {viewer && <NavLink to={`/u/${viewer.username}`}>Profile</NavLink>}
        <NavLink to="/lists">Lists</NavLink>
        <NavLink to="/hidden">Muted &amp; blocked</NavLink>
      </nav>
      <div className="who">
        {viewer && <span className="muted">@{viewer.username}</span>}
        <button type="button" className="link" onClick={() => signOut()}>Sign out</button>
      </div>
      {live.error != null && (
        <p className="error live-error" role="alert">Live updates stopped: {describeError(live.error)}</p>
      )}
    </header>
  );
}
