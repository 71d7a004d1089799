import { useState, type FormEvent } from 'react';
import { useMutation } from '@apollo/client/react';

import { useAuth } from '../auth';
import { ErrorNote } from '../components/ErrorNote';
import { LOG_IN, SIGN_UP } from '../graphql';

/** Log in, or create an account. */
export function SignIn() {
  const { signIn, notice } = useAuth();
  const [mode, setMode] = useState<'logIn' | 'signUp'>('logIn');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [logIn, loggingIn] = useMutation(LOG_IN);
  const [signUp, signingUp] = useMutation(SIGN_UP);
  const busy = loggingIn.loading || signingUp.loading;
  const error = mode === 'logIn' ? loggingIn.error : signingUp.error;

  async function submit(e: FormEvent) {
    e.preventDefault();
    try {
      if (mode === 'logIn') {
        const { data } = await logIn({ variables: { input: { username, password } } });
        if (data) signIn(data.logIn.token);
      } else {
        const input = { username, password, displayName: displayName.trim() || undefined };
        const { data } = await signUp({ variables: { input } });
        if (data) signIn(data.signUp.token);
      }
    } catch {
      // Shown below from the mutation's error.
    }
  }

  return (
    <main className="page narrow">
      <h1 className="brand-title">Feed</h1>
      {notice && <p className="notice" role="status">{notice}</p>}
      <form className="card sign-in" onSubmit={submit}>
        <div className="tabs" role="tablist">
          <button type="button" role="tab" aria-selected={mode === 'logIn'} onClick={() => setMode('logIn')}>Log in</button>
          <button type="button" role="tab" aria-selected={mode === 'signUp'} onClick={() => setMode('signUp')}>Sign up</button>
        </div>
        <label>
          Username
          <input name="username" autoComplete="username" required value={username} onChange={(e) => setUsername(e.target.value)} />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autoComplete={mode === 'logIn' ? 'current-password' : 'new-password'}
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        {mode === 'signUp' && (
          <>
            <label>
              Display name <span className="muted">(optional)</span>
              <input name="displayName" value={displayName} onChange={(e) => setDisplayName(e.target.value)} />
            </label>
            <p className="muted small">A username is 3 to 30 letters, digits or underscores; a password at least 10 characters.</p>
          </>
        )}
        <ErrorNote error={error} />
        <button type="submit" disabled={busy}>
          {mode === 'logIn' ? (busy ? 'Logging in…' : 'Log in') : (busy ? 'Creating your account…' : 'Create account')}
        </button>
      </form>
    </main>
  );
}
