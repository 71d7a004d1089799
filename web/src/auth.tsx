// Who is signed in: the bearer token, kept in localStorage so that a reload
// stays signed in, and the Apollo client that carries it.
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { ApolloProvider } from '@apollo/client/react';

import { newSession, type Session } from './apollo';

const TOKEN_KEY = 'feedservice.token';

interface Auth {
  token: string | null;
  /** Why the last session ended, when the server ended it. */
  notice: string | null;
  signIn: (token: string) => void;
  signOut: (notice?: string) => void;
}

const AuthContext = createContext<Auth | null>(null);

export function useAuth(): Auth {
  const auth = useContext(AuthContext);
  if (!auth) throw new Error('useAuth outside <AuthProvider>');
  return auth;
}

export function AuthProvider({ children }: { children: ReactNode }) {
  const [token, setToken] = useState<string | null>(() => localStorage.getItem(TOKEN_KEY));
  const [notice, setNotice] = useState<string | null>(null);

  const signIn = useCallback((t: string) => {
    localStorage.setItem(TOKEN_KEY, t);
    setNotice(null);
    setToken(t);
  }, []);
  const signOut = useCallback((why?: string) => {
    localStorage.removeItem(TOKEN_KEY);
    setNotice(why ?? null);
    setToken(null);
  }, []);

  // A new client (and cache) for each token: nothing of one person's data
  // is left for the next.
  const [session, setSession] = useState<Session | null>(null);
  useEffect(() => {
    const s = newSession(token, () => signOut('Your session has ended. Sign in again.'));
    setSession(s);
    return s.dispose;
  }, [token, signOut]);

  const auth = useMemo(() => ({ token, notice, signIn, signOut }), [token, notice, signIn, signOut]);
  if (!session) return null;
  return (
    <AuthContext.Provider value={auth}>
      <ApolloProvider client={session.client}>{children}</ApolloProvider>
    </AuthContext.Provider>
  );
}
