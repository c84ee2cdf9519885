// The public request and response types, each resolved per operation: from the generated OpenAPI
// types when the server documents the route, else from the hand-written ContractOperations.
import type { ContractOperations } from './contract-types.js'
import type { paths } from './generated/openapi.js'
import type { ROUTES, RouteName } from './routes.js'

type Route<N extends RouteName> = (typeof ROUTES)[N]
type MethodOf<N extends RouteName> = Route<N> extends `${infer M} ${string}` ? Lowercase<M> : never
export type PathOf<N extends RouteName> = Route<N> extends `${string} ${infer P}` ? P : never

/** The generated operation for this route, or never while the document lacks it. */
type Generated<N extends RouteName> =
  PathOf<N> extends keyof paths
    ? MethodOf<N> extends keyof paths[PathOf<N>] ? NonNullable<paths[PathOf<N>][MethodOf<N>]> : never
    : never

type Or<T, Fallback> = [T] extends [never] ? Fallback : T
type Fallback<N extends RouteName, K extends string> = ContractOperations[N] extends { [_ in K]: infer T } ? T : never
// Each takes the operation as a type parameter, so an absent operation (never) stays never.
type Json<T> = T extends { content: { 'application/json': infer Body } } ? Body : never
type Success<Op> = Op extends { responses: infer R }
  ? { [S in keyof R]: S extends 200 | 201 | 202 ? Json<R[S]> : S extends 204 ? undefined : never }[keyof R]
  : never
type RequestJson<Op> = Op extends { requestBody?: infer B } ? Json<NonNullable<B>> : never
type Query<Op> = Op extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never

export type ResponseOf<N extends RouteName> = Or<Success<Generated<N>>, Fallback<N, 'response'>>
export type BodyOf<N extends RouteName> = Or<RequestJson<Generated<N>>, Fallback<N, 'body'>>
export type QueryOf<N extends RouteName> = Or<Query<Generated<N>>, Fallback<N, 'query'>>

type ParamNames<P extends string> = P extends `${string}{${infer Name}}${infer Rest}` ? Name | ParamNames<Rest> : never
export type PathParams<N extends RouteName> = { [Name in ParamNames<PathOf<N>>]: string }

/** The element type of a list response, plain array or paged envelope. */
export type ItemOf<T> = T extends readonly (infer Item)[] ? Item : T extends { items: readonly (infer Item)[] } ? Item : never

export type Health = ResponseOf<'getHealth'>
export type Workspace = ResponseOf<'getWorkspace'>
export type Board = ResponseOf<'getBoard'>
export type Status = ItemOf<ResponseOf<'listStatuses'>>
export type Label = ItemOf<ResponseOf<'listLabels'>>
export type LabelCreateParams = BodyOf<'createLabel'>
export type LabelUpdateParams = BodyOf<'updateLabel'>

export type Post = ResponseOf<'getPost'>
export type PostListItem = ItemOf<ResponseOf<'listPosts'>>
export type PostListParams = { board: string } & QueryOf<'listPosts'>
export type PostCreateParams = { board: string } & BodyOf<'createPost'>
export type PostUpdateParams = BodyOf<'updatePost'>
export type PostMergeParams = BodyOf<'mergePost'>

export type Comment = ResponseOf<'getComment'>
export type CommentListItem = ItemOf<ResponseOf<'listComments'>>
export type CommentListParams = QueryOf<'listComments'>
export type CommentCreateParams = BodyOf<'createComment'>
export type CommentUpdateParams = BodyOf<'updateComment'>

export type Vote = ItemOf<ResponseOf<'listVotes'>>
export type VoteListParams = QueryOf<'listVotes'>
export type VoteToggleParams = BodyOf<'toggleVote'>
export type VoteToggleResult = ResponseOf<'toggleVote'>

export type Webhook = ItemOf<ResponseOf<'listWebhooks'>>
export type WebhookCreated = ResponseOf<'createWebhook'>
export type WebhookCreateParams = BodyOf<'createWebhook'>
export type WebhookUpdateParams = BodyOf<'updateWebhook'>
export type WebhookLogListParams = QueryOf<'listWebhookLogs'>
export type WebhookDeliveryLog = ItemOf<ResponseOf<'listWebhookLogs'>>
export type WebhookRetryResult = ResponseOf<'retryWebhookDelivery'>
