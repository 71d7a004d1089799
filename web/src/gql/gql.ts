/* eslint-disable */
import * as types from './graphql';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  fragment UserSummary on User {\n    id\n    username\n    displayName\n  }\n": typeof types.UserSummaryFragmentDoc,
    "\n  fragment PostFields on Post {\n    id\n    body\n    createdAt\n    repostCount\n    author { ...UserSummary }\n    repostOf {\n      id\n      body\n      createdAt\n      repostCount\n      author { ...UserSummary }\n    }\n  }\n": typeof types.PostFieldsFragmentDoc,
    "\n  fragment FeedEdgeFields on FeedEdge {\n    cursor\n    node {\n      addedAt\n      post { ...PostFields }\n      reposters { ...UserSummary }\n    }\n  }\n": typeof types.FeedEdgeFieldsFragmentDoc,
    "\n  fragment ProfileFields on User {\n    ...UserSummary\n    bio\n    followerCount\n    followingCount\n    postCount\n    viewerIsFollowing\n    followsViewer\n    viewerHasBlocked\n    viewerHasMuted\n    isProtected\n    viewerHasRequestedFollow\n  }\n": typeof types.ProfileFieldsFragmentDoc,
    "\n  fragment BlockPayloadFields on BlockPayload {\n    user { ...ProfileFields }\n    viewer { ...ProfileFields }\n  }\n": typeof types.BlockPayloadFieldsFragmentDoc,
    "\n  fragment FollowPayloadFields on FollowPayload {\n    user { ...ProfileFields }\n    viewer { ...ProfileFields }\n  }\n": typeof types.FollowPayloadFieldsFragmentDoc,
    "\n  mutation SignUp($input: SignUpInput!) {\n    signUp(input: $input) { token user { ...UserSummary } }\n  }\n": typeof types.SignUpDocument,
    "\n  mutation LogIn($input: LogInInput!) {\n    logIn(input: $input) { token user { ...UserSummary } }\n  }\n": typeof types.LogInDocument,
    "\n  query Viewer {\n    viewer { ...UserSummary }\n  }\n": typeof types.ViewerDocument,
    "\n  query Home($first: Int, $after: String, $last: Int, $before: String) {\n    home(first: $first, after: $after, last: $last, before: $before) {\n      edges {\n        cursor\n        feedCursor\n        node {\n          __typename\n          ... on FeedItem {\n            addedAt\n            post { ...PostFields }\n            reposters { ...UserSummary }\n          }\n          ... on SuggestedUser {\n            followedByCount\n            user { ...UserSummary viewerIsFollowing }\n          }\n          ... on PromotedPost {\n            post { ...PostFields }\n          }\n        }\n      }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      unreadCount\n    }\n  }\n": typeof types.HomeDocument,
    "\n  mutation DismissHomeEntry($id: ID!) {\n    dismissHomeEntry(id: $id) { dismissedId }\n  }\n": typeof types.DismissHomeEntryDocument,
    "\n  mutation MarkFeedRead($upTo: String) {\n    markFeedRead(upTo: $upTo) { unreadCount }\n  }\n": typeof types.MarkFeedReadDocument,
    "\n  subscription UnreadBadge {\n    unreadBadge { count capped }\n  }\n": typeof types.UnreadBadgeDocument,
    "\n  subscription FeedItemAdded {\n    feedItemAdded { ...FeedEdgeFields }\n  }\n": typeof types.FeedItemAddedDocument,
    "\n  mutation CreatePost($body: String!) {\n    createPost(input: { body: $body }) { post { ...PostFields } }\n  }\n": typeof types.CreatePostDocument,
    "\n  mutation Repost($postId: ID!) {\n    repost(postId: $postId) { post { ...PostFields } }\n  }\n": typeof types.RepostDocument,
    "\n  mutation DeletePost($id: ID!) {\n    deletePost(id: $id) { deletedPostId }\n  }\n": typeof types.DeletePostDocument,
    "\n  query Profile($username: String!) {\n    user(username: $username) { ...ProfileFields }\n  }\n": typeof types.ProfileDocument,
    "\n  query Timeline($username: String!, $first: Int, $after: String) {\n    user(username: $username) {\n      id\n      timeline(first: $first, after: $after) {\n        edges { cursor node { ...PostFields } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      }\n    }\n  }\n": typeof types.TimelineDocument,
    "\n  query Followers($username: String!, $first: Int, $after: String) {\n    user(username: $username) {\n      id\n      followers(first: $first, after: $after) {\n        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      }\n    }\n  }\n": typeof types.FollowersDocument,
    "\n  query Following($username: String!, $first: Int, $after: String) {\n    user(username: $username) {\n      id\n      following(first: $first, after: $after) {\n        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      }\n    }\n  }\n": typeof types.FollowingDocument,
    "\n  query FollowersPage($username: String!, $first: Int, $offset: Int) {\n    user(username: $username) {\n      id\n      followers(first: $first, offset: $offset) {\n        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n        totalCount\n      }\n    }\n  }\n": typeof types.FollowersPageDocument,
    "\n  query FollowingPage($username: String!, $first: Int, $offset: Int) {\n    user(username: $username) {\n      id\n      following(first: $first, offset: $offset) {\n        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n        totalCount\n      }\n    }\n  }\n": typeof types.FollowingPageDocument,
    "\n  mutation Follow($userId: ID!) {\n    follow(userId: $userId) { ...FollowPayloadFields }\n  }\n": typeof types.FollowDocument,
    "\n  mutation Unfollow($userId: ID!) {\n    unfollow(userId: $userId) { ...FollowPayloadFields }\n  }\n": typeof types.UnfollowDocument,
    "\n  mutation SetProtected($on: Boolean!) {\n    updateProfile(input: { isProtected: $on }) { ...ProfileFields }\n  }\n": typeof types.SetProtectedDocument,
    "\n  query FollowRequests($first: Int, $after: String) {\n    followRequests(first: $first, after: $after) {\n      totalCount\n      edges { cursor since node { ...UserSummary } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": typeof types.FollowRequestsDocument,
    "\n  mutation ApproveFollowRequest($userId: ID!) {\n    approveFollowRequest(userId: $userId) { ...FollowPayloadFields }\n  }\n": typeof types.ApproveFollowRequestDocument,
    "\n  mutation RejectFollowRequest($userId: ID!) {\n    rejectFollowRequest(userId: $userId) { ...FollowPayloadFields }\n  }\n": typeof types.RejectFollowRequestDocument,
    "\n  fragment ListFields on List {\n    id\n    name\n    memberCount\n    createdAt\n  }\n": typeof types.ListFieldsFragmentDoc,
    "\n  query Lists($after: String) {\n    lists(first: 10, after: $after) {\n      totalCount\n      edges { cursor node { ...ListFields } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n": typeof types.ListsDocument,
    "\n  query ListMembers($id: ID!, $after: String) {\n    node(id: $id) {\n      ... on List {\n        id\n        members(first: 100, after: $after) {\n          edges { cursor node { id } }\n          pageInfo { hasNextPage endCursor }\n        }\n      }\n    }\n  }\n": typeof types.ListMembersDocument,
    "\n  query List($id: ID!, $first: Int, $after: String) {\n    node(id: $id) {\n      ... on List {\n        ...ListFields\n        members(first: 20) {\n          edges { cursor since node { ...UserSummary } }\n          pageInfo { hasNextPage endCursor }\n        }\n        feed(first: $first, after: $after) {\n          edges { ...FeedEdgeFields }\n          pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n        }\n      }\n    }\n  }\n": typeof types.ListDocument,
    "\n  query ListMemberPage($id: ID!, $after: String) {\n    node(id: $id) {\n      ... on List {\n        id\n        members(first: 20, after: $after) {\n          edges { cursor since node { ...UserSummary } }\n          pageInfo { hasNextPage endCursor }\n        }\n      }\n    }\n  }\n": typeof types.ListMemberPageDocument,
    "\n  mutation CreateList($name: String!) {\n    createList(name: $name) { list { ...ListFields } }\n  }\n": typeof types.CreateListDocument,
    "\n  mutation RenameList($listId: ID!, $name: String!) {\n    renameList(listId: $listId, name: $name) { list { ...ListFields } }\n  }\n": typeof types.RenameListDocument,
    "\n  mutation DeleteList($listId: ID!) {\n    deleteList(listId: $listId) { deletedListId }\n  }\n": typeof types.DeleteListDocument,
    "\n  mutation AddToList($listId: ID!, $userId: ID!) {\n    addToList(listId: $listId, userId: $userId) { list { ...ListFields } }\n  }\n": typeof types.AddToListDocument,
    "\n  mutation RemoveFromList($listId: ID!, $userId: ID!) {\n    removeFromList(listId: $listId, userId: $userId) { list { ...ListFields } }\n  }\n": typeof types.RemoveFromListDocument,
    "\n  mutation Block($userId: ID!) {\n    block(userId: $userId) { ...BlockPayloadFields }\n  }\n": typeof types.BlockDocument,
    "\n  mutation Unblock($userId: ID!) {\n    unblock(userId: $userId) { ...BlockPayloadFields }\n  }\n": typeof types.UnblockDocument,
    "\n  mutation Mute($userId: ID!) {\n    mute(userId: $userId) { user { ...ProfileFields } }\n  }\n": typeof types.MuteDocument,
    "\n  mutation Unmute($userId: ID!) {\n    unmute(userId: $userId) { user { ...ProfileFields } }\n  }\n": typeof types.UnmuteDocument,
    "\n  query BlockedUsers($first: Int, $after: String) {\n    blockedUsers(first: $first, after: $after) {\n      edges { cursor since node { ...UserSummary viewerHasBlocked viewerHasMuted } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      totalCount\n    }\n  }\n": typeof types.BlockedUsersDocument,
    "\n  query MutedUsers($first: Int, $after: String) {\n    mutedUsers(first: $first, after: $after) {\n      edges { cursor since node { ...UserSummary viewerHasBlocked viewerHasMuted } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      totalCount\n    }\n  }\n": typeof types.MutedUsersDocument,
};
const documents: Documents = {
    "\n  fragment UserSummary on User {\n    id\n    username\n    displayName\n  }\n": types.UserSummaryFragmentDoc,
    "\n  fragment PostFields on Post {\n    id\n    body\n    createdAt\n    repostCount\n    author { ...UserSummary }\n    repostOf {\n      id\n      body\n      createdAt\n      repostCount\n      author { ...UserSummary }\n    }\n  }\n": types.PostFieldsFragmentDoc,
    "\n  fragment FeedEdgeFields on FeedEdge {\n    cursor\n    node {\n      addedAt\n      post { ...PostFields }\n      reposters { ...UserSummary }\n    }\n  }\n": types.FeedEdgeFieldsFragmentDoc,
    "\n  fragment ProfileFields on User {\n    ...UserSummary\n    bio\n    followerCount\n    followingCount\n    postCount\n    viewerIsFollowing\n    followsViewer\n    viewerHasBlocked\n    viewerHasMuted\n    isProtected\n    viewerHasRequestedFollow\n  }\n": types.ProfileFieldsFragmentDoc,
    "\n  fragment BlockPayloadFields on BlockPayload {\n    user { ...ProfileFields }\n    viewer { ...ProfileFields }\n  }\n": types.BlockPayloadFieldsFragmentDoc,
    "\n  fragment FollowPayloadFields on FollowPayload {\n    user { ...ProfileFields }\n    viewer { ...ProfileFields }\n  }\n": types.FollowPayloadFieldsFragmentDoc,
    "\n  mutation SignUp($input: SignUpInput!) {\n    signUp(input: $input) { token user { ...UserSummary } }\n  }\n": types.SignUpDocument,
    "\n  mutation LogIn($input: LogInInput!) {\n    logIn(input: $input) { token user { ...UserSummary } }\n  }\n": types.LogInDocument,
    "\n  query Viewer {\n    viewer { ...UserSummary }\n  }\n": types.ViewerDocument,
    "\n  query Home($first: Int, $after: String, $last: Int, $before: String) {\n    home(first: $first, after: $after, last: $last, before: $before) {\n      edges {\n        cursor\n        feedCursor\n        node {\n          __typename\n          ... on FeedItem {\n            addedAt\n            post { ...PostFields }\n            reposters { ...UserSummary }\n          }\n          ... on SuggestedUser {\n            followedByCount\n            user { ...UserSummary viewerIsFollowing }\n          }\n          ... on PromotedPost {\n            post { ...PostFields }\n          }\n        }\n      }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      unreadCount\n    }\n  }\n": types.HomeDocument,
    "\n  mutation DismissHomeEntry($id: ID!) {\n    dismissHomeEntry(id: $id) { dismissedId }\n  }\n": types.DismissHomeEntryDocument,
    "\n  mutation MarkFeedRead($upTo: String) {\n    markFeedRead(upTo: $upTo) { unreadCount }\n  }\n": types.MarkFeedReadDocument,
    "\n  subscription UnreadBadge {\n    unreadBadge { count capped }\n  }\n": types.UnreadBadgeDocument,
    "\n  subscription FeedItemAdded {\n    feedItemAdded { ...FeedEdgeFields }\n  }\n": types.FeedItemAddedDocument,
    "\n  mutation CreatePost($body: String!) {\n    createPost(input: { body: $body }) { post { ...PostFields } }\n  }\n": types.CreatePostDocument,
    "\n  mutation Repost($postId: ID!) {\n    repost(postId: $postId) { post { ...PostFields } }\n  }\n": types.RepostDocument,
    "\n  mutation DeletePost($id: ID!) {\n    deletePost(id: $id) { deletedPostId }\n  }\n": types.DeletePostDocument,
    "\n  query Profile($username: String!) {\n    user(username: $username) { ...ProfileFields }\n  }\n": types.ProfileDocument,
    "\n  query Timeline($username: String!, $first: Int, $after: String) {\n    user(username: $username) {\n      id\n      timeline(first: $first, after: $after) {\n        edges { cursor node { ...PostFields } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      }\n    }\n  }\n": types.TimelineDocument,
    "\n  query Followers($username: String!, $first: Int, $after: String) {\n    user(username: $username) {\n      id\n      followers(first: $first, after: $after) {\n        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      }\n    }\n  }\n": types.FollowersDocument,
    "\n  query Following($username: String!, $first: Int, $after: String) {\n    user(username: $username) {\n      id\n      following(first: $first, after: $after) {\n        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      }\n    }\n  }\n": types.FollowingDocument,
    "\n  query FollowersPage($username: String!, $first: Int, $offset: Int) {\n    user(username: $username) {\n      id\n      followers(first: $first, offset: $offset) {\n        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n        totalCount\n      }\n    }\n  }\n": types.FollowersPageDocument,
    "\n  query FollowingPage($username: String!, $first: Int, $offset: Int) {\n    user(username: $username) {\n      id\n      following(first: $first, offset: $offset) {\n        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n        totalCount\n      }\n    }\n  }\n": types.FollowingPageDocument,
    "\n  mutation Follow($userId: ID!) {\n    follow(userId: $userId) { ...FollowPayloadFields }\n  }\n": types.FollowDocument,
    "\n  mutation Unfollow($userId: ID!) {\n    unfollow(userId: $userId) { ...FollowPayloadFields }\n  }\n": types.UnfollowDocument,
    "\n  mutation SetProtected($on: Boolean!) {\n    updateProfile(input: { isProtected: $on }) { ...ProfileFields }\n  }\n": types.SetProtectedDocument,
    "\n  query FollowRequests($first: Int, $after: String) {\n    followRequests(first: $first, after: $after) {\n      totalCount\n      edges { cursor since node { ...UserSummary } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": types.FollowRequestsDocument,
    "\n  mutation ApproveFollowRequest($userId: ID!) {\n    approveFollowRequest(userId: $userId) { ...FollowPayloadFields }\n  }\n": types.ApproveFollowRequestDocument,
    "\n  mutation RejectFollowRequest($userId: ID!) {\n    rejectFollowRequest(userId: $userId) { ...FollowPayloadFields }\n  }\n": types.RejectFollowRequestDocument,
    "\n  fragment ListFields on List {\n    id\n    name\n    memberCount\n    createdAt\n  }\n": types.ListFieldsFragmentDoc,
    "\n  query Lists($after: String) {\n    lists(first: 10, after: $after) {\n      totalCount\n      edges { cursor node { ...ListFields } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n": types.ListsDocument,
    "\n  query ListMembers($id: ID!, $after: String) {\n    node(id: $id) {\n      ... on List {\n        id\n        members(first: 100, after: $after) {\n          edges { cursor node { id } }\n          pageInfo { hasNextPage endCursor }\n        }\n      }\n    }\n  }\n": types.ListMembersDocument,
    "\n  query List($id: ID!, $first: Int, $after: String) {\n    node(id: $id) {\n      ... on List {\n        ...ListFields\n        members(first: 20) {\n          edges { cursor since node { ...UserSummary } }\n          pageInfo { hasNextPage endCursor }\n        }\n        feed(first: $first, after: $after) {\n          edges { ...FeedEdgeFields }\n          pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n        }\n      }\n    }\n  }\n": types.ListDocument,
    "\n  query ListMemberPage($id: ID!, $after: String) {\n    node(id: $id) {\n      ... on List {\n        id\n        members(first: 20, after: $after) {\n          edges { cursor since node { ...UserSummary } }\n          pageInfo { hasNextPage endCursor }\n        }\n      }\n    }\n  }\n": types.ListMemberPageDocument,
    "\n  mutation CreateList($name: String!) {\n    createList(name: $name) { list { ...ListFields } }\n  }\n": types.CreateListDocument,
    "\n  mutation RenameList($listId: ID!, $name: String!) {\n    renameList(listId: $listId, name: $name) { list { ...ListFields } }\n  }\n": types.RenameListDocument,
    "\n  mutation DeleteList($listId: ID!) {\n    deleteList(listId: $listId) { deletedListId }\n  }\n": types.DeleteListDocument,
    "\n  mutation AddToList($listId: ID!, $userId: ID!) {\n    addToList(listId: $listId, userId: $userId) { list { ...ListFields } }\n  }\n": types.AddToListDocument,
    "\n  mutation RemoveFromList($listId: ID!, $userId: ID!) {\n    removeFromList(listId: $listId, userId: $userId) { list { ...ListFields } }\n  }\n": types.RemoveFromListDocument,
    "\n  mutation Block($userId: ID!) {\n    block(userId: $userId) { ...BlockPayloadFields }\n  }\n": types.BlockDocument,
    "\n  mutation Unblock($userId: ID!) {\n    unblock(userId: $userId) { ...BlockPayloadFields }\n  }\n": types.UnblockDocument,
    "\n  mutation Mute($userId: ID!) {\n    mute(userId: $userId) { user { ...ProfileFields } }\n  }\n": types.MuteDocument,
    "\n  mutation Unmute($userId: ID!) {\n    unmute(userId: $userId) { user { ...ProfileFields } }\n  }\n": types.UnmuteDocument,
    "\n  query BlockedUsers($first: Int, $after: String) {\n    blockedUsers(first: $first, after: $after) {\n      edges { cursor since node { ...UserSummary viewerHasBlocked viewerHasMuted } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      totalCount\n    }\n  }\n": types.BlockedUsersDocument,
    "\n  query MutedUsers($first: Int, $after: String) {\n    mutedUsers(first: $first, after: $after) {\n      edges { cursor since node { ...UserSummary viewerHasBlocked viewerHasMuted } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      totalCount\n    }\n  }\n": types.MutedUsersDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment UserSummary on User {\n    id\n    username\n    displayName\n  }\n"): (typeof documents)["\n  fragment UserSummary on User {\n    id\n    username\n    displayName\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment PostFields on Post {\n    id\n    body\n    createdAt\n    repostCount\n    author { ...UserSummary }\n    repostOf {\n      id\n      body\n      createdAt\n      repostCount\n      author { ...UserSummary }\n    }\n  }\n"): (typeof documents)["\n  fragment PostFields on Post {\n    id\n    body\n    createdAt\n    repostCount\n    author { ...UserSummary }\n    repostOf {\n      id\n      body\n      createdAt\n      repostCount\n      author { ...UserSummary }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment FeedEdgeFields on FeedEdge {\n    cursor\n    node {\n      addedAt\n      post { ...PostFields }\n      reposters { ...UserSummary }\n    }\n  }\n"): (typeof documents)["\n  fragment FeedEdgeFields on FeedEdge {\n    cursor\n    node {\n      addedAt\n      post { ...PostFields }\n      reposters { ...UserSummary }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ProfileFields on User {\n    ...UserSummary\n    bio\n    followerCount\n    followingCount\n    postCount\n    viewerIsFollowing\n    followsViewer\n    viewerHasBlocked\n    viewerHasMuted\n    isProtected\n    viewerHasRequestedFollow\n  }\n"): (typeof documents)["\n  fragment ProfileFields on User {\n    ...UserSummary\n    bio\n    followerCount\n    followingCount\n    postCount\n    viewerIsFollowing\n    followsViewer\n    viewerHasBlocked\n    viewerHasMuted\n    isProtected\n    viewerHasRequestedFollow\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment BlockPayloadFields on BlockPayload {\n    user { ...ProfileFields }\n    viewer { ...ProfileFields }\n  }\n"): (typeof documents)["\n  fragment BlockPayloadFields on BlockPayload {\n    user { ...ProfileFields }\n    viewer { ...ProfileFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment FollowPayloadFields on FollowPayload {\n    user { ...ProfileFields }\n    viewer { ...ProfileFields }\n  }\n"): (typeof documents)["\n  fragment FollowPayloadFields on FollowPayload {\n    user { ...ProfileFields }\n    viewer { ...ProfileFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SignUp($input: SignUpInput!) {\n    signUp(input: $input) { token user { ...UserSummary } }\n  }\n"): (typeof documents)["\n  mutation SignUp($input: SignUpInput!) {\n    signUp(input: $input) { token user { ...UserSummary } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation LogIn($input: LogInInput!) {\n    logIn(input: $input) { token user { ...UserSummary } }\n  }\n"): (typeof documents)["\n  mutation LogIn($input: LogInInput!) {\n    logIn(input: $input) { token user { ...UserSummary } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Viewer {\n    viewer { ...UserSummary }\n  }\n"): (typeof documents)["\n  query Viewer {\n    viewer { ...UserSummary }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Home($first: Int, $after: String, $last: Int, $before: String) {\n    home(first: $first, after: $after, last: $last, before: $before) {\n      edges {\n        cursor\n        feedCursor\n        node {\n          __typename\n          ... on FeedItem {\n            addedAt\n            post { ...PostFields }\n            reposters { ...UserSummary }\n          }\n          ... on SuggestedUser {\n            followedByCount\n            user { ...UserSummary viewerIsFollowing }\n          }\n          ... on PromotedPost {\n            post { ...PostFields }\n          }\n        }\n      }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      unreadCount\n    }\n  }\n"): (typeof documents)["\n  query Home($first: Int, $after: String, $last: Int, $before: String) {\n    home(first: $first, after: $after, last: $last, before: $before) {\n      edges {\n        cursor\n        feedCursor\n        node {\n          __typename\n          ... on FeedItem {\n            addedAt\n            post { ...PostFields }\n            reposters { ...UserSummary }\n          }\n          ... on SuggestedUser {\n            followedByCount\n            user { ...UserSummary viewerIsFollowing }\n          }\n          ... on PromotedPost {\n            post { ...PostFields }\n          }\n        }\n      }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      unreadCount\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DismissHomeEntry($id: ID!) {\n    dismissHomeEntry(id: $id) { dismissedId }\n  }\n"): (typeof documents)["\n  mutation DismissHomeEntry($id: ID!) {\n    dismissHomeEntry(id: $id) { dismissedId }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation MarkFeedRead($upTo: String) {\n    markFeedRead(upTo: $upTo) { unreadCount }\n  }\n"): (typeof documents)["\n  mutation MarkFeedRead($upTo: String) {\n    markFeedRead(upTo: $upTo) { unreadCount }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription UnreadBadge {\n    unreadBadge { count capped }\n  }\n"): (typeof documents)["\n  subscription UnreadBadge {\n    unreadBadge { count capped }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription FeedItemAdded {\n    feedItemAdded { ...FeedEdgeFields }\n  }\n"): (typeof documents)["\n  subscription FeedItemAdded {\n    feedItemAdded { ...FeedEdgeFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreatePost($body: String!) {\n    createPost(input: { body: $body }) { post { ...PostFields } }\n  }\n"): (typeof documents)["\n  mutation CreatePost($body: String!) {\n    createPost(input: { body: $body }) { post { ...PostFields } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Repost($postId: ID!) {\n    repost(postId: $postId) { post { ...PostFields } }\n  }\n"): (typeof documents)["\n  mutation Repost($postId: ID!) {\n    repost(postId: $postId) { post { ...PostFields } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeletePost($id: ID!) {\n    deletePost(id: $id) { deletedPostId }\n  }\n"): (typeof documents)["\n  mutation DeletePost($id: ID!) {\n    deletePost(id: $id) { deletedPostId }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Profile($username: String!) {\n    user(username: $username) { ...ProfileFields }\n  }\n"): (typeof documents)["\n  query Profile($username: String!) {\n    user(username: $username) { ...ProfileFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Timeline($username: String!, $first: Int, $after: String) {\n    user(username: $username) {\n      id\n      timeline(first: $first, after: $after) {\n        edges { cursor node { ...PostFields } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Timeline($username: String!, $first: Int, $after: String) {\n    user(username: $username) {\n      id\n      timeline(first: $first, after: $after) {\n        edges { cursor node { ...PostFields } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Followers($username: String!, $first: Int, $after: String) {\n    user(username: $username) {\n      id\n      followers(first: $first, after: $after) {\n        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Followers($username: String!, $first: Int, $after: String) {\n    user(username: $username) {\n      id\n      followers(first: $first, after: $after) {\n        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Following($username: String!, $first: Int, $after: String) {\n    user(username: $username) {\n      id\n      following(first: $first, after: $after) {\n        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Following($username: String!, $first: Int, $after: String) {\n    user(username: $username) {\n      id\n      following(first: $first, after: $after) {\n        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query FollowersPage($username: String!, $first: Int, $offset: Int) {\n    user(username: $username) {\n      id\n      followers(first: $first, offset: $offset) {\n        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n        totalCount\n      }\n    }\n  }\n"): (typeof documents)["\n  query FollowersPage($username: String!, $first: Int, $offset: Int) {\n    user(username: $username) {\n      id\n      followers(first: $first, offset: $offset) {\n        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n        totalCount\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query FollowingPage($username: String!, $first: Int, $offset: Int) {\n    user(username: $username) {\n      id\n      following(first: $first, offset: $offset) {\n        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n        totalCount\n      }\n    }\n  }\n"): (typeof documents)["\n  query FollowingPage($username: String!, $first: Int, $offset: Int) {\n    user(username: $username) {\n      id\n      following(first: $first, offset: $offset) {\n        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n        totalCount\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Follow($userId: ID!) {\n    follow(userId: $userId) { ...FollowPayloadFields }\n  }\n"): (typeof documents)["\n  mutation Follow($userId: ID!) {\n    follow(userId: $userId) { ...FollowPayloadFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Unfollow($userId: ID!) {\n    unfollow(userId: $userId) { ...FollowPayloadFields }\n  }\n"): (typeof documents)["\n  mutation Unfollow($userId: ID!) {\n    unfollow(userId: $userId) { ...FollowPayloadFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetProtected($on: Boolean!) {\n    updateProfile(input: { isProtected: $on }) { ...ProfileFields }\n  }\n"): (typeof documents)["\n  mutation SetProtected($on: Boolean!) {\n    updateProfile(input: { isProtected: $on }) { ...ProfileFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query FollowRequests($first: Int, $after: String) {\n    followRequests(first: $first, after: $after) {\n      totalCount\n      edges { cursor since node { ...UserSummary } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"): (typeof documents)["\n  query FollowRequests($first: Int, $after: String) {\n    followRequests(first: $first, after: $after) {\n      totalCount\n      edges { cursor since node { ...UserSummary } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ApproveFollowRequest($userId: ID!) {\n    approveFollowRequest(userId: $userId) { ...FollowPayloadFields }\n  }\n"): (typeof documents)["\n  mutation ApproveFollowRequest($userId: ID!) {\n    approveFollowRequest(userId: $userId) { ...FollowPayloadFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RejectFollowRequest($userId: ID!) {\n    rejectFollowRequest(userId: $userId) { ...FollowPayloadFields }\n  }\n"): (typeof documents)["\n  mutation RejectFollowRequest($userId: ID!) {\n    rejectFollowRequest(userId: $userId) { ...FollowPayloadFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ListFields on List {\n    id\n    name\n    memberCount\n    createdAt\n  }\n"): (typeof documents)["\n  fragment ListFields on List {\n    id\n    name\n    memberCount\n    createdAt\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Lists($after: String) {\n    lists(first: 10, after: $after) {\n      totalCount\n      edges { cursor node { ...ListFields } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n"): (typeof documents)["\n  query Lists($after: String) {\n    lists(first: 10, after: $after) {\n      totalCount\n      edges { cursor node { ...ListFields } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ListMembers($id: ID!, $after: String) {\n    node(id: $id) {\n      ... on List {\n        id\n        members(first: 100, after: $after) {\n          edges { cursor node { id } }\n          pageInfo { hasNextPage endCursor }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query ListMembers($id: ID!, $after: String) {\n    node(id: $id) {\n      ... on List {\n        id\n        members(first: 100, after: $after) {\n          edges { cursor node { id } }\n          pageInfo { hasNextPage endCursor }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query List($id: ID!, $first: Int, $after: String) {\n    node(id: $id) {\n      ... on List {\n        ...ListFields\n        members(first: 20) {\n          edges { cursor since node { ...UserSummary } }\n          pageInfo { hasNextPage endCursor }\n        }\n        feed(first: $first, after: $after) {\n          edges { ...FeedEdgeFields }\n          pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query List($id: ID!, $first: Int, $after: String) {\n    node(id: $id) {\n      ... on List {\n        ...ListFields\n        members(first: 20) {\n          edges { cursor since node { ...UserSummary } }\n          pageInfo { hasNextPage endCursor }\n        }\n        feed(first: $first, after: $after) {\n          edges { ...FeedEdgeFields }\n          pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ListMemberPage($id: ID!, $after: String) {\n    node(id: $id) {\n      ... on List {\n        id\n        members(first: 20, after: $after) {\n          edges { cursor since node { ...UserSummary } }\n          pageInfo { hasNextPage endCursor }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query ListMemberPage($id: ID!, $after: String) {\n    node(id: $id) {\n      ... on List {\n        id\n        members(first: 20, after: $after) {\n          edges { cursor since node { ...UserSummary } }\n          pageInfo { hasNextPage endCursor }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateList($name: String!) {\n    createList(name: $name) { list { ...ListFields } }\n  }\n"): (typeof documents)["\n  mutation CreateList($name: String!) {\n    createList(name: $name) { list { ...ListFields } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RenameList($listId: ID!, $name: String!) {\n    renameList(listId: $listId, name: $name) { list { ...ListFields } }\n  }\n"): (typeof documents)["\n  mutation RenameList($listId: ID!, $name: String!) {\n    renameList(listId: $listId, name: $name) { list { ...ListFields } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteList($listId: ID!) {\n    deleteList(listId: $listId) { deletedListId }\n  }\n"): (typeof documents)["\n  mutation DeleteList($listId: ID!) {\n    deleteList(listId: $listId) { deletedListId }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AddToList($listId: ID!, $userId: ID!) {\n    addToList(listId: $listId, userId: $userId) { list { ...ListFields } }\n  }\n"): (typeof documents)["\n  mutation AddToList($listId: ID!, $userId: ID!) {\n    addToList(listId: $listId, userId: $userId) { list { ...ListFields } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RemoveFromList($listId: ID!, $userId: ID!) {\n    removeFromList(listId: $listId, userId: $userId) { list { ...ListFields } }\n  }\n"): (typeof documents)["\n  mutation RemoveFromList($listId: ID!, $userId: ID!) {\n    removeFromList(listId: $listId, userId: $userId) { list { ...ListFields } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Block($userId: ID!) {\n    block(userId: $userId) { ...BlockPayloadFields }\n  }\n"): (typeof documents)["\n  mutation Block($userId: ID!) {\n    block(userId: $userId) { ...BlockPayloadFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Unblock($userId: ID!) {\n    unblock(userId: $userId) { ...BlockPayloadFields }\n  }\n"): (typeof documents)["\n  mutation Unblock($userId: ID!) {\n    unblock(userId: $userId) { ...BlockPayloadFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Mute($userId: ID!) {\n    mute(userId: $userId) { user { ...ProfileFields } }\n  }\n"): (typeof documents)["\n  mutation Mute($userId: ID!) {\n    mute(userId: $userId) { user { ...ProfileFields } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Unmute($userId: ID!) {\n    unmute(userId: $userId) { user { ...ProfileFields } }\n  }\n"): (typeof documents)["\n  mutation Unmute($userId: ID!) {\n    unmute(userId: $userId) { user { ...ProfileFields } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query BlockedUsers($first: Int, $after: String) {\n    blockedUsers(first: $first, after: $after) {\n      edges { cursor since node { ...UserSummary viewerHasBlocked viewerHasMuted } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      totalCount\n    }\n  }\n"): (typeof documents)["\n  query BlockedUsers($first: Int, $after: String) {\n    blockedUsers(first: $first, after: $after) {\n      edges { cursor since node { ...UserSummary viewerHasBlocked viewerHasMuted } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      totalCount\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query MutedUsers($first: Int, $after: String) {\n    mutedUsers(first: $first, after: $after) {\n      edges { cursor since node { ...UserSummary viewerHasBlocked viewerHasMuted } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      totalCount\n    }\n  }\n"): (typeof documents)["\n  query MutedUsers($first: Int, $after: String) {\n    mutedUsers(first: $first, after: $after) {\n      edges { cursor since node { ...UserSummary viewerHasBlocked viewerHasMuted } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      totalCount\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;