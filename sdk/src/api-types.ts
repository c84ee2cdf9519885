// The public request and response types, each resolved per operation from the generated OpenAPI
// types: ROUTES only accepts documented routes, so every operation here has its generated types.
import type { components, paths, webhooks } from './generated/openapi.js'
import type { WithResponse } from './core/request.js'
import type { ROUTES, RouteName } from './routes.js'

type Route<N extends RouteName> = (typeof ROUTES)[N]
type MethodOf<N extends RouteName> = Route<N> extends `${infer M} ${string}` ? Lowercase<M> : never
export type PathOf<N extends RouteName> = Route<N> extends `${string} ${infer P}` ? P : never

/** The generated operation of this route. */
type Operation<N extends RouteName> = NonNullable<paths[PathOf<N> & keyof paths][MethodOf<N> & keyof paths[PathOf<N> & keyof paths]]>

type Json<T> = T extends { content: { 'application/json': infer Body } } ? Body : never
type Success<Op> = Op extends { responses: infer R }
  ? { [S in keyof R]: S extends 200 | 201 | 202 ? Json<R[S]> : S extends 204 ? undefined : never }[keyof R]
  : never
type RequestJson<Op> = Op extends { requestBody?: infer B } ? Json<NonNullable<B>> : never
type Query<Op> = Op extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never

export type ResponseOf<N extends RouteName> = Success<Operation<N>>
export type BodyOf<N extends RouteName> = RequestJson<Operation<N>>
export type QueryOf<N extends RouteName> = Query<Operation<N>>
/** What a method resolves with: the response body, carrying its `lastResponse`. */
export type Result<N extends RouteName> = WithResponse<ResponseOf<N>>

/** The operations whose query takes `page`: what `Chorus.list` walks. */
export type PagedRouteName = { [N in RouteName]: [QueryOf<N>] extends [never] ? never : QueryOf<N> extends { page?: number } ? N : never }[RouteName]

type ParamNames<P extends string> = P extends `${string}{${infer Name}}${infer Rest}` ? Name | ParamNames<Rest> : never
export type PathParams<N extends RouteName> = { [Name in ParamNames<PathOf<N>>]: string }

/** The element type of a list response, plain array or paged envelope. */
export type ItemOf<T> = T extends readonly (infer Item)[] ? Item : T extends { items: readonly (infer Item)[] } ? Item : never

/** A named schema of the document (`Post`, `Comment`, `Webhook`, ...): `Schema<'PostPage'>` for one not exported by name below. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name]

// The API's resources, by the names of the document's component schemas.
export type Health = Schema<'Health'>
export type Workspace = Schema<'Workspace'>
export type OAuthGrant = Schema<'OAuthGrant'>
export type Board = Schema<'Board'>
export type Status = Schema<'Status'>
export type Label = Schema<'Label'>
export type Post = Schema<'Post'>
export type Demand = Schema<'Demand'>
export type Factors = Schema<'Factors'>
export type Company = Schema<'Company'>
export type CompanyDetail = Schema<'CompanyDetail'>
export type DemandSettings = Schema<'DemandSettings'>
export type Scoring = Schema<'Scoring'>
export type ScoreHistory = Schema<'ScoreHistory'>
export type EndUser = Schema<'EndUser'>
export type EndUserRecord = Schema<'EndUserRecord'>
export type EndUserExport = Schema<'EndUserExport'>
export type EndUserErasure = Schema<'EndUserErasure'>
export type Author = Schema<'Author'>
export type Comment = Schema<'Comment'>
export type Vote = Schema<'Vote'>
export type VoteToggleResult = Schema<'VoteToggleResult'>
export type Webhook = Schema<'Webhook'>
export type WebhookCreated = Schema<'WebhookCreated'>
export type WebhookDeliveryLog = Schema<'WebhookDeliveryLog'>
export type WebhookRetryResult = Schema<'WebhookRetry'>
export type WebhookTestResult = Schema<'WebhookTest'>
export type Member = Schema<'Member'>
export type ApiKey = Schema<'ApiKey'>
export type User = Schema<'User'>
/** The body of every error response: `{code, message, detail, request_id}`. */
export type ChorusErrorBody = Schema<'Error'>
/** @deprecated The same as `ChorusErrorBody`. */
export type ApiErrorBody = ChorusErrorBody
/** The body of a 422: `detail` lists `{loc, msg, type}`. */
export type ValidationErrorBody = Schema<'HTTPValidationError'>
export type PostPage = Schema<'PostPage'>
export type CommentPage = Schema<'CommentPage'>
export type VotePage = Schema<'VotePage'>
export type PostMergeResult = Schema<'PostMergeResult'>
export type TrackerIssue = Schema<'TrackerIssue'>
export type PublicPost = Schema<'PublicPost'>
export type PublicBoard = Schema<'PublicBoard'>
export type Roadmap = Schema<'Roadmap'>
export type NotificationSubscription = Schema<'NotificationSubscription'>
export type EndUserSession = Schema<'EndUserSession'>
export type Integration = Schema<'Integration'>

// Webhook events, one per kind in the document's `webhooks` section (the server's own list of kinds):
// a kind the server adds appears here when the types are regenerated.
type DeliveredBody<K extends keyof webhooks> = webhooks[K] extends { post: { requestBody: { content: { 'application/json': infer Body } } } } ? Body : never
/** Every event kind, e.g. `post.created`. */
export type WebhookEventType = keyof webhooks & string
/** A delivered event; narrowed by `type`: `WebhookEvent<'post.created'>['data']` is `{ post: Post }`. */
export type WebhookEvent<T extends WebhookEventType = WebhookEventType> = { [K in T]: DeliveredBody<K> }[T]
/** The `data` of one kind of event. */
export type WebhookEventData<T extends WebhookEventType> = WebhookEvent<T> extends { data: infer Data } ? Data : never

// What the resources' methods take: the request schemas, with the path parameters some methods fold in.
export type LabelCreateParams = BodyOf<'createLabel'>
export type CompanyPutParams = BodyOf<'putCompany'>
export type DemandSettingsUpdateParams = BodyOf<'updateDemandSettings'>
export type ScoringPutParams = BodyOf<'putScoring'>
export type LabelUpdateParams = BodyOf<'updateLabel'>
export type PostListItem = ItemOf<ResponseOf<'listPosts'>>
export type PostListParams = { board: string } & QueryOf<'listPosts'>
export type PostCreateParams = { board: string } & BodyOf<'createPost'>
export type PostUpdateParams = BodyOf<'updatePost'>
export type PostMergeParams = BodyOf<'mergePost'>
export type TrackerIssueCreateParams = BodyOf<'createTrackerIssue'>
export type InboxPost = Schema<'InboxPost'>
export type HeldPost = Schema<'HeldPost'>
export type Block = Schema<'Block'>
export type BlockCreateParams = BodyOf<'createBlock'>
export type InboxListParams = QueryOf<'listInbox'>
export type InboxReadStateParams = BodyOf<'setInboxReadState'>
export type PostBulkParams = BodyOf<'bulkUpdatePosts'>
export type SavedView = Schema<'SavedView'>
export type SavedViewCreateParams = BodyOf<'createSavedView'>
export type SavedViewUpdateParams = BodyOf<'updateSavedView'>
export type CommentListItem = ItemOf<ResponseOf<'listComments'>>
export type CommentListParams = QueryOf<'listComments'>
export type CommentCreateParams = BodyOf<'createComment'>
export type CommentUpdateParams = BodyOf<'updateComment'>
export type ChangelogEntry = Schema<'ChangelogEntry'>
export type ChangelogListItem = ItemOf<ResponseOf<'listChangelogEntries'>>
export type ChangelogListParams = QueryOf<'listChangelogEntries'>
export type ChangelogCreateParams = BodyOf<'createChangelogEntry'>
export type ChangelogUpdateParams = BodyOf<'updateChangelogEntry'>
export type VoteListParams = QueryOf<'listVotes'>
export type VoteToggleParams = BodyOf<'toggleVote'>
export type WebhookCreateParams = BodyOf<'createWebhook'>
export type WebhookUpdateParams = BodyOf<'updateWebhook'>
export type WebhookLogListParams = QueryOf<'listWebhookLogs'>

export type Plan = Workspace['plan']
export type Role = NonNullable<Workspace['role']>
export type SubscriptionStatus = Workspace['subscription_status']
export type PostSort = NonNullable<QueryOf<'listPosts'>['sort']>
