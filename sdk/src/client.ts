import type { BodyOf, Health, ItemOf, PagedRouteName, PathParams, QueryOf, Result, ResponseOf } from './api-types.js'
import { ChorusError } from './core/errors.js'
import { PagePromise, type Page } from './core/pagination.js'
import { sendRequest, type FetchLike, type HttpMethod, type RequestOptions, type RequestSpec, type ResponseMeta, type TransportConfig, type WithResponse } from './core/request.js'
import { Boards, Labels, Statuses } from './resources/catalog.js'
import { Companies } from './resources/companies.js'
import { Moderation } from './resources/moderation.js'
import { Imports } from './resources/imports.js'
import { EndUsers } from './resources/end-users.js'
import { ScoringResource } from './resources/scoring.js'
import { Changelog } from './resources/changelog.js'
import { Comments } from './resources/comments.js'
import { Inbox, SavedViews } from './resources/inbox.js'
import { OAuthGrants } from './resources/oauth-grants.js'
import { Posts } from './resources/posts.js'
import { Votes } from './resources/votes.js'
import { Webhooks } from './resources/webhooks.js'
import { Workspaces } from './resources/workspaces.js'
import { ROUTES, type RouteName } from './routes.js'

export interface ChorusOptions {
  /** A workspace API key, `chorus_sk_...`. Keep it on the server. Required unless `credentials` is `include`. */
  apiKey?: string
  /** `include` in dashboard code running in the browser: the session cookie authenticates instead of a key. */
  credentials?: 'include'
  /** The API root, ending in `/api/v1`, e.g. `https://chorus.example.com/api/v1`. */
  baseUrl: string
  /** Defaults to the global `fetch`. */
  fetch?: FetchLike
  /** Retries after a 429, a 5xx or a network failure; default 2. */
  maxRetries?: number
  /** Budget of one attempt, response body included; default 60 000. */
  timeoutMs?: number
  /** First backoff delay, doubled on each retry; default 500. */
  retryDelayMs?: number
  /** Cap of the backoff delay; default 8 000. A server's Retry-After is honoured up to 60 s. */
  maxRetryDelayMs?: number
  /** The key's workspace slug; looked up once with `GET /workspaces` when a route needs it and it is not given. */
  workspace?: string
  /** Sent with every request. */
  headers?: Record<string, string>
}

/** What a call carries besides its options: path parameters, query and body, typed per route. */
export type CallSpec<N extends RouteName> = RequestOptions & { path?: PathParams<N>; query?: QueryOf<N>; body?: BodyOf<N>; file?: RequestSpec['file'] }

export class Chorus {
  readonly workspaces = new Workspaces(this)
  readonly boards = new Boards(this)
  readonly statuses = new Statuses(this)
  readonly labels = new Labels(this)
  readonly posts = new Posts(this)
  readonly inbox = new Inbox(this)
  readonly views = new SavedViews(this)
  readonly comments = new Comments(this)
  readonly changelog = new Changelog(this)
  readonly votes = new Votes(this)
  readonly webhooks = new Webhooks(this)
  readonly companies = new Companies(this)
  readonly moderation = new Moderation(this)
  readonly imports = new Imports(this)
  readonly scoring = new ScoringResource(this)
  readonly endUsers = new EndUsers(this)
  readonly oauthGrants = new OAuthGrants(this)

  /**
   * Status, headers and request id of the latest successful response of this client. With calls in
   * parallel it is whichever finished last; each returned object's own `lastResponse` is exact.
   */
  lastResponse: ResponseMeta | undefined

  readonly #transport: TransportConfig
  #workspace: Promise<string> | undefined

  constructor(options: ChorusOptions) {
    if (!options?.apiKey && options?.credentials !== 'include') throw new TypeError('Chorus: `apiKey` is required (or `credentials: "include"` for a dashboard session)')
    if (!options.baseUrl) throw new TypeError('Chorus: `baseUrl` is required, e.g. https://chorus.example.com/api/v1')
    const fetchImpl = options.fetch ?? globalThis.fetch?.bind(globalThis)
    if (!fetchImpl) throw new TypeError('Chorus: no global fetch here; pass `fetch`')
    this.#transport = {
      apiKey: options.apiKey,
      credentials: options.credentials,
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      fetch: fetchImpl,
      maxRetries: options.maxRetries ?? 2,
      timeoutMs: options.timeoutMs ?? 60_000,
      retryDelayMs: options.retryDelayMs ?? 500,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 8_000,
      headers: options.headers ?? {},
      onResponse: (meta) => { this.lastResponse = meta },
    }
    if (options.workspace) this.#workspace = Promise.resolve(options.workspace)
  }

  /** Any route, for what no resource covers yet: `path` is relative to `baseUrl` and sent as given. */
  request<T = unknown>(method: HttpMethod, path: string, spec?: RequestSpec): Promise<WithResponse<T>> {
    return sendRequest<T>(this.#transport, method, path, spec)
  }

  health(options?: RequestOptions): Promise<WithResponse<Health>> {
    return this.call('getHealth', options)
  }

  /** The workspace the API key belongs to (routes under `/workspaces/{slug}` need its slug). */
  workspaceSlug(): Promise<string> {
    if (!this.#workspace) {
      const lookup = this.workspaces.list().then((workspaces) => {
        const [only] = workspaces
        if (!only || workspaces.length > 1) {
          throw new ChorusError('Cannot tell which workspace to use: pass `workspace` to new Chorus()', { code: 'WORKSPACE_UNKNOWN' })
        }
        return only.slug
      })
      // A failed look-up is forgotten, so the next call asks again.
      lookup.catch(() => this.#workspace === lookup && (this.#workspace = undefined))
      this.#workspace = lookup
    }
    return this.#workspace
  }

  /** One operation of ROUTES by name, typed from the OpenAPI document or the contract: what the resources are made of. */
  async call<N extends RouteName>(name: N, spec: CallSpec<N> = {}): Promise<Result<N>> {
    const [method, template] = ROUTES[name].split(' ') as [HttpMethod, string]
    const params = (spec.path ?? {}) as Record<string, string>
    const path = template.replace(/\{(\w+)\}/g, (_, param: string) => {
      const value = params[param]
      if (typeof value !== 'string' || value === '') throw new TypeError(`Chorus: ${name} needs a non-empty \`${param}\``)
      return encodeURIComponent(value)
    })
    const { path: _params, ...rest } = spec
    return this.request<ResponseOf<N>>(method, path, rest as RequestSpec) as Promise<Result<N>>
  }

  /** A paged list operation by name: awaitable for its first page, async-iterable over every item. */
  list<N extends PagedRouteName>(name: N, spec: CallSpec<N> = {}): PagePromise<ItemOf<ResponseOf<N>>> {
    const query: { page?: number } = spec.query ?? {}
    const pageQuery = (page: number): QueryOf<N> => Object.assign({}, spec.query, { page })
    return new PagePromise((page) => this.call(name, { ...spec, query: pageQuery(page) }) as Promise<WithResponse<Page<ItemOf<ResponseOf<N>>>>>, query.page ?? 1)
  }
}
