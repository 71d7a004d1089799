// Turning what went wrong into a sentence for the person using the app.
import { CombinedGraphQLErrors, ServerError, ServerParseError } from '@apollo/client/errors';

// The API's error codes (extensions.code), as the contract lists them.
export type ErrorCode =
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'BAD_USER_INPUT'
  | 'RATE_LIMITED'
  | 'INTERNAL_SERVER_ERROR';

/** The extensions.code of the first GraphQL error in err, if any. */
export function errorCode(err: unknown): ErrorCode | undefined {
  if (CombinedGraphQLErrors.is(err)) {
    return err.errors[0]?.extensions?.code as ErrorCode | undefined;
  }
  return undefined;
}

/**
 * describeError says in words what went wrong. The API's own messages are
 * written for people ("the username "ada" is taken"), so they are shown as
 * they are; what the API does not explain (a lost connection, a server
 * fault) gets a sentence of ours.
 */
export function describeError(err: unknown): string {
  if (CombinedGraphQLErrors.is(err)) {
    const messages = err.errors.map((e) => {
      switch (e.extensions?.code) {
        case 'RATE_LIMITED':
          return `Slow down: ${e.message}.`;
        case 'INTERNAL_SERVER_ERROR':
          return `Something went wrong on the server. Try again in a moment. (${e.message})`;
        default:
          return sentence(e.message);
      }
    });
    return [...new Set(messages)].join(' ');
  }
  if (ServerError.is(err)) {
    return `The server answered with an error (HTTP ${err.statusCode}). Try again in a moment.`;
  }
  if (ServerParseError.is(err)) {
    return 'The server sent an answer the app cannot read. Try again in a moment.';
  }
  if (isCloseEvent(err)) {
    return `The live connection closed (${err.code}${err.reason ? `: ${err.reason}` : ''}).`;
  }
  if (err instanceof TypeError) {
    // fetch rejects with a TypeError when the network is down.
    return 'Cannot reach the server. Check your connection and try again.';
  }
  if (err instanceof Error) {
    return sentence(err.message);
  }
  return 'Something went wrong. Try again in a moment.';
}

function sentence(message: string): string {
  const s = message.trim();
  if (!s) return 'Something went wrong.';
  const first = s[0].toUpperCase() + s.slice(1);
  return /[.!?]$/.test(first) ? first : `${first}.`;
}

function isCloseEvent(err: unknown): err is { code: number; reason: string } {
  return typeof err === 'object' && err !== null && 'code' in err && 'reason' in err &&
    typeof (err as { code: unknown }).code === 'number';
}
