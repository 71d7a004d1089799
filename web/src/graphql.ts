// Every GraphQL document the app sends, with the TypeScript shape of its
// data and variables. The names follow the service's API contract
// (../shared/contract.graphqls).
import { gql, type TypedDocumentNode } from '@apollo/client';

export interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

export interface UserSummary {
  __typename?: 'User';
  id: string;
  username: string;
  displayName: string;
}

export interface Post {
  __typename?: 'Post';
  id: string;
  body: string;
  createdAt: string;
  repostCount: number;
  author: UserSummary;
  repostOf: Omit<Post, 'repostOf'> | null;
}

export interface FeedEdge {
  cursor: string;
  node: {
    addedAt: string;
    post: Post;
    reposters: UserSummary[];
  };
}

export interface Connection<E> {
  edges: E[];
  pageInfo: PageInfo;
}

const USER_SUMMARY = gql`
  fragment UserSummary on User {
    id
    username
    displayName
  }
`;

const POST_FIELDS = gql`
  fragment PostFields on Post {
    id
    body
    createdAt
    repostCount
    author { ...UserSummary }
    repostOf {
      id
      body
      createdAt
      repostCount
      author { ...UserSummary }
    }
  }
  ${USER_SUMMARY}
`;

const FEED_EDGE = gql`
  fragment FeedEdgeFields on FeedEdge {
    cursor
    node {
      addedAt
      post { ...PostFields }
      reposters { ...UserSummary }
    }
  }
  ${POST_FIELDS}
`;

// ---------------------------------------------------------------------------
// Accounts

export interface AuthPayload {
  token: string;
  user: UserSummary;
}

export const SIGN_UP: TypedDocumentNode<
  { signUp: AuthPayload },
  { input: { username: string; password: string; displayName?: string } }
> = gql`
  mutation SignUp($input: SignUpInput!) {
    signUp(input: $input) { token user { ...UserSummary } }
  }
  ${USER_SUMMARY}
`;

export const LOG_IN: TypedDocumentNode<
  { logIn: AuthPayload },
  { input: { username: string; password: string } }
> = gql`
  mutation LogIn($input: LogInInput!) {
    logIn(input: $input) { token user { ...UserSummary } }
  }
  ${USER_SUMMARY}
`;

export const VIEWER: TypedDocumentNode<{ viewer: UserSummary | null }, Record<string, never>> = gql`
  query Viewer {
    viewer { ...UserSummary }
  }
  ${USER_SUMMARY}
`;

// ---------------------------------------------------------------------------
// Home feed

// The home connection: the feed's entries with a promoted post or a
// suggested user in every Nth place (the server's HOME_INSERT_EVERY).
// Its cursors are home cursors; feedCursor is a feed item's feed cursor,
// which markFeedRead takes.

export interface FeedItem {
  __typename: 'FeedItem';
  addedAt: string;
  post: Post;
  reposters: UserSummary[];
}

export interface SuggestedUser {
  __typename: 'SuggestedUser';
  followedByCount: number;
  user: UserSummary & { viewerIsFollowing: boolean };
}

export interface PromotedPost {
  __typename: 'PromotedPost';
  post: Post;
}

export type HomeEntry = FeedItem | SuggestedUser | PromotedPost;

export interface HomeEdge {
  cursor: string;
  feedCursor: string | null;
  node: HomeEntry;
}

export const HOME: TypedDocumentNode<
  { home: Connection<HomeEdge> & { unreadCount: number } },
  { first?: number | null; after?: string | null; last?: number | null; before?: string | null }
> = gql`
  query Home($first: Int, $after: String, $last: Int, $before: String) {
    home(first: $first, after: $after, last: $last, before: $before) {
      edges {
        cursor
        feedCursor
        node {
          __typename
          ... on FeedItem {
            addedAt
            post { ...PostFields }
            reposters { ...UserSummary }
          }
          ... on SuggestedUser {
            followedByCount
            user { ...UserSummary viewerIsFollowing }
          }
          ... on PromotedPost {
            post { ...PostFields }
          }
        }
      }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      unreadCount
    }
  }
  ${POST_FIELDS}
`;

export const DISMISS_HOME_ENTRY: TypedDocumentNode<
  { dismissHomeEntry: { dismissedId: string } },
  { id: string }
> = gql`
  mutation DismissHomeEntry($id: ID!) {
    dismissHomeEntry(id: $id) { dismissedId }
  }
`;

export const MARK_FEED_READ: TypedDocumentNode<
  { markFeedRead: { unreadCount: number } },
  { upTo: string | null }
> = gql`
  mutation MarkFeedRead($upTo: String) {
    markFeedRead(upTo: $upTo) { unreadCount }
  }
`;

export const UNREAD_COUNT: TypedDocumentNode<{ unreadCount: number }, Record<string, never>> = gql`
  subscription UnreadCount {
    unreadCount
  }
`;

export const FEED_ITEM_ADDED: TypedDocumentNode<{ feedItemAdded: FeedEdge }, Record<string, never>> = gql`
  subscription FeedItemAdded {
    feedItemAdded { ...FeedEdgeFields }
  }
  ${FEED_EDGE}
`;

// ---------------------------------------------------------------------------
// Posts

export const CREATE_POST: TypedDocumentNode<{ createPost: { post: Post } }, { body: string }> = gql`
  mutation CreatePost($body: String!) {
    createPost(input: { body: $body }) { post { ...PostFields } }
  }
  ${POST_FIELDS}
`;

export const REPOST: TypedDocumentNode<{ repost: { post: Post } }, { postId: string }> = gql`
  mutation Repost($postId: ID!) {
    repost(postId: $postId) { post { ...PostFields } }
  }
  ${POST_FIELDS}
`;

export const DELETE_POST: TypedDocumentNode<{ deletePost: { deletedPostId: string } }, { id: string }> = gql`
  mutation DeletePost($id: ID!) {
    deletePost(id: $id) { deletedPostId }
  }
`;

// ---------------------------------------------------------------------------
// Profiles

export interface Profile extends UserSummary {
  bio: string;
  followerCount: number;
  followingCount: number;
  postCount: number;
  viewerIsFollowing: boolean;
  followsViewer: boolean;
}

const PROFILE_FIELDS = gql`
  fragment ProfileFields on User {
    ...UserSummary
    bio
    followerCount
    followingCount
    postCount
    viewerIsFollowing
    followsViewer
  }
  ${USER_SUMMARY}
`;

export const PROFILE: TypedDocumentNode<{ user: Profile | null }, { username: string }> = gql`
  query Profile($username: String!) {
    user(username: $username) { ...ProfileFields }
  }
  ${PROFILE_FIELDS}
`;

export const TIMELINE: TypedDocumentNode<
  { user: { id: string; timeline: Connection<{ cursor: string; node: Post }> } | null },
  { username: string; first: number; after?: string | null }
> = gql`
  query Timeline($username: String!, $first: Int, $after: String) {
    user(username: $username) {
      id
      timeline(first: $first, after: $after) {
        edges { cursor node { ...PostFields } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }
  }
  ${POST_FIELDS}
`;

export interface UserEdge {
  cursor: string;
  followedAt: string;
  node: UserSummary & { viewerIsFollowing: boolean; followsViewer: boolean };
}

// Followers and Following share one shape: the list is under the field
// that the query asks for.
type RelationList = TypedDocumentNode<
  { user: { id: string; followers?: Connection<UserEdge>; following?: Connection<UserEdge> } | null },
  { username: string; first: number; after?: string | null }
>;

export const FOLLOWERS: RelationList = gql`
  query Followers($username: String!, $first: Int, $after: String) {
    user(username: $username) {
      id
      followers(first: $first, after: $after) {
        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }
  }
  ${USER_SUMMARY}
`;

export const FOLLOWING: RelationList = gql`
  query Following($username: String!, $first: Int, $after: String) {
    user(username: $username) {
      id
      following(first: $first, after: $after) {
        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }
  }
  ${USER_SUMMARY}
`;

// A page of a relation list by number: offset skips the newest entries
// (a page jump); totalCount numbers the pages.
type RelationJump = TypedDocumentNode<
  {
    user: {
      id: string;
      followers?: Connection<UserEdge> & { totalCount: number };
      following?: Connection<UserEdge> & { totalCount: number };
    } | null;
  },
  { username: string; first: number; offset: number }
>;

export const FOLLOWERS_PAGE: RelationJump = gql`
  query FollowersPage($username: String!, $first: Int, $offset: Int) {
    user(username: $username) {
      id
      followers(first: $first, offset: $offset) {
        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
        totalCount
      }
    }
  }
  ${USER_SUMMARY}
`;

export const FOLLOWING_PAGE: RelationJump = gql`
  query FollowingPage($username: String!, $first: Int, $offset: Int) {
    user(username: $username) {
      id
      following(first: $first, offset: $offset) {
        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
        totalCount
      }
    }
  }
  ${USER_SUMMARY}
`;

const FOLLOW_PAYLOAD = gql`
  fragment FollowPayloadFields on FollowPayload {
    user { ...ProfileFields }
    viewer { ...ProfileFields }
  }
  ${PROFILE_FIELDS}
`;

type FollowPayload = { user: Profile; viewer: Profile };

export const FOLLOW: TypedDocumentNode<{ follow: FollowPayload }, { userId: string }> = gql`
  mutation Follow($userId: ID!) {
    follow(userId: $userId) { ...FollowPayloadFields }
  }
  ${FOLLOW_PAYLOAD}
`;

export const UNFOLLOW: TypedDocumentNode<{ unfollow: FollowPayload }, { userId: string }> = gql`
  mutation Unfollow($userId: ID!) {
    unfollow(userId: $userId) { ...FollowPayloadFields }
  }
  ${FOLLOW_PAYLOAD}
`;
