/** The list envelope of posts, comments and votes (CONTRACT §6). */
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
export class PagePromise<T> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  #first: Promise<Page<T>> | undefined

  constructor(
    private readonly fetchPage: (page: number) => Promise<Page<T>>,
    private readonly startPage = 1,
  ) {}

  #firstPage(): Promise<Page<T>> {
    return (this.#first ??= this.fetchPage(this.startPage))
  }

  then<A = Page<T>, B = never>(
    onfulfilled?: ((page: Page<T>) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#firstPage().then(onfulfilled, onrejected)
  }

  /** Every page, starting with the one `await` gives. */
  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
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
