import type { WithResponse } from './request.js'

/** The list envelope of posts, comments and votes (docs/api.md#lists-and-paging). */
export interface Page<T> {
  items: T[]
  page: number
  per_page: number
  total: number
  total_pages: number
}

/**
 * What `list()` returns: `await` it for one page, or `for await` over it for every item of every
 * page from there on. Nothing is requested until it is awaited or iterated; pages are fetched one
 * at a time as the loop needs them, so breaking out early stops the requests.
 */
export class PagePromise<T> implements PromiseLike<WithResponse<Page<T>>>, AsyncIterable<T> {
  #first: Promise<WithResponse<Page<T>>> | undefined

  constructor(
    private readonly fetchPage: (page: number) => Promise<WithResponse<Page<T>>>,
    private readonly startPage = 1,
  ) {}

  #firstPage(): Promise<WithResponse<Page<T>>> {
    return (this.#first ??= this.fetchPage(this.startPage))
  }

  then<A = WithResponse<Page<T>>, B = never>(
    onfulfilled?: ((page: WithResponse<Page<T>>) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#firstPage().then(onfulfilled, onrejected)
  }

  /** Every page, starting with the one `await` gives; each carries its own `lastResponse`. */
  async *pages(): AsyncGenerator<WithResponse<Page<T>>, void, undefined> {
    let page = await this.#firstPage()
    yield page
    // An empty page also ends the walk, so totals that disagree with the items cannot keep it going.
    while (page.page < page.total_pages && page.items.length > 0) {
      page = await this.fetchPage(page.page + 1)
      yield page
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.items
  }
}
